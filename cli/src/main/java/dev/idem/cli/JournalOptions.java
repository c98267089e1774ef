package dev.idem.cli;

import dev.idem.core.JournalException;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.storage.StoreOpener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteErrorCode;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Where the journal is: an embedded (SQLite) journal's directory, or the JDBC URL of a journal in a
 * database (SQLite, PostgreSQL, or an app's own H2). The embedded directory comes first: it is what
 * {@code JdbcJournal.openEmbedded} makes, and the only location the read-only commands read
 * beside a live app without touching a lock.
 */
final class JournalOptions {
  /** How long a changing command waits for another connection's lock on a SQLite file: 1 s. */
  private static final Duration OTHER_CONNECTION_WAIT = Duration.ofSeconds(1);
  /**
   * H2's {@code ;PASSWORD=pw} (or {@code ;CIPHER_PASSWORD=}): the value runs to the next unescaped
   * {@code ;}, as H2 reads it ({@code \;} is part of it, and so are {@code &} and spaces), or to a
   * closing brace or quote then a space or comma: where picocli's message closes the quoted value.
   */
  private static final Pattern H2_PASSWORD =
      Pattern.compile("(?i)(;[a-z_.-]*password=)(?:\\\\.|(?![}'][\\s,])[^;\\\\])*");
  /**
   * A query's {@code password=pw} or {@code sslpassword=pw} (PostgreSQL, SQLite): the value runs to
   * the next {@code &}, as pgjdbc reads it, or to a space (never part of a URL) or a closing brace or
   * quote then a space or comma, closing a value quoted in a message.
   */
  private static final Pattern QUERY_PASSWORD = Pattern.compile("(?i)([?&][a-z_.-]*password=)(?:(?![}'][\\s,])[^&\\s])*");
  /**
   * The password in a URL's user-info, {@code //user:pw@host} (a DATABASE_URL with {@code jdbc:}
   * put before it): from the first {@code :} after the user to the last {@code @} before a
   * {@code ?}, {@code #} or space, so that a password with an {@code @} or a {@code /} in it is
   * blanked whole. The user may hold an {@code @} too (Azure's {@code user@server}).
   */
  private static final Pattern USER_INFO_PASSWORD = Pattern.compile("(//[^/?#:\\s]*:)[^?#\\s]*@");
  /** A PostgreSQL URL with a user-info part, {@code //user@host} or {@code //user:pw@host}. */
  private static final Pattern USER_INFO = Pattern.compile("jdbc:postgresql://[^?#\\s]*@");

  /** The command these options are mixed into, for its usage errors. */
  @Spec(Spec.Target.MIXEE)
  CommandSpec command;

  @ArgGroup(exclusive = true, multiplicity = "1")
  Location location;

  @Option(names = "--user", description = "JDBC user, with --jdbc-url.")
  String user;

  @Option(names = "--password", description = "JDBC password, with --jdbc-url (prefer the"
      + " IDEM_JDBC_PASSWORD environment variable, which stays out of the process list).")
  String password;

  static final class Location {
    @Option(names = "--dir", paramLabel = "DIR",
        description = "Directory of an embedded SQLite journal (JdbcJournal.openEmbedded).")
    Path dir;

    @Option(names = "--jdbc-url", paramLabel = "URL", description = "JDBC URL of a journal database:"
        + " jdbc:sqlite:FILE, jdbc:postgresql://HOST/DB, or jdbc:h2:... (an app's own H2 database).")
    String jdbcUrl;
  }

  /**
   * Opens the journal for inspection, read-only (no migration, no recovery, every write refused),
   * every read one snapshot: a count and its listing agree whatever the app writes meanwhile. An
   * embedded journal also takes no lock and writes no byte, so it can be read while the app runs.
   */
  JdbcJournal openReadOnly() throws JournalException {
    requireLocation();
    if (location.dir != null) {
      return JdbcJournal.openReadOnly(location.dir);
    }
    return openJdbc(true);
  }

  /** Refuses an empty or blank --dir or --jdbc-url before anything is opened. */
  private void requireLocation() {
    CliCommand.requireLocation(command, "--dir", location.dir);
    CliCommand.requireLocation(command, "--jdbc-url", location.jdbcUrl);
  }

  private JdbcJournal openJdbc(boolean readOnly) throws JournalException {
    try {
      DataSource ds = dataSource(location.jdbcUrl, !readOnly);
      if (readOnly) {
        return JdbcJournal.openReadOnly(ds);
      }
      // An H2 database held alone syncs as its connection closes: the journal's own disk sync
      // would take a second connection, which H2's exclusive mode refuses (ExclusiveH2DataSource).
      return JdbcJournal.dataSource(ds).syncToDisk(!(ds instanceof ExclusiveH2DataSource)).open();
    } catch (JournalException e) {
      // Say what H2's refusals mean instead of "a database error".
      String url = redacted(location.jdbcUrl);
      for (Throwable t = e; t != null; t = t.getCause()) {
        if (t instanceof ExclusiveH2DataSource.OpenElsewhere) {
          throw inUse(url, e);
        }
        String state = t instanceof SQLException sql ? sql.getSQLState() : null;
        if ("90146".equals(state)) { // IFEXISTS
          throw new JournalException("no journal at " + url + ": the H2 database does not exist"
              + " (the CLI never creates one)", e);
        }
        if ("90020".equals(state)) { // DATABASE_ALREADY_OPEN: another process holds the file's lock
          throw new JournalException("the H2 database " + url + " is open in another process, most likely the app: H2"
              + " lets one process open a file database. Stop the app, then run the command again; or, to read the"
              + " journal while the app runs, add ;AUTO_SERVER=TRUE to the app's URL and to this one (or serve the"
              + " database from an H2 TCP server and give both its jdbc:h2:tcp:// URL). redrive and purge --yes"
              + " need the app stopped either way", e);
        }
        if ("90135".equals(state)) {
          throw new JournalException("the H2 database " + url + " is held alone by another session (another"
              + " redrive or purge --yes?): run the command again when it has ended", e);
        }
        if ("90040".equals(state)) {
          throw new JournalException("redrive and purge --yes hold an H2 database alone (SET EXCLUSIVE), which"
              + " needs a user with admin rights on " + url + ": give one with --user or the URL's USER=", e);
        }
      }
      throw e;
    }
  }

  /**
   * Opens the journal to change it (re-drive, purge), refusing to create one: an operator pointing
   * at the wrong directory must get an error, not an empty new journal.
   */
  JdbcJournal openForWriting() throws dev.idem.core.IdempotencyException {
    requireLocation();
    if (location.dir != null) {
      JdbcJournal.openReadOnly(location.dir).close(); // the same checks and messages: is a journal there?
      return JdbcJournal.openEmbedded(location.dir);
    }
    // The same checks first, read-only: a database that holds no journal (the app's own, a typo'd
    // empty file) gets an error, not the journal's tables created in it by the open's migration.
    openJdbc(true).close();
    return openJdbc(false);
  }

  /**
   * @param toChange for a command that changes the journal: a SQLite file or an H2 database is then
   *     refused while another connection has it open, and held alone until closed (see
   *     {@link #exclusive} and {@link ExclusiveH2DataSource})
   */
  private DataSource dataSource(String url, boolean toChange) throws JournalException {
    String pw = password != null ? password : System.getenv("IDEM_JDBC_PASSWORD");
    if (url.startsWith("jdbc:postgresql:")) {
      PGSimpleDataSource ds = new PGSimpleDataSource();
      // pgjdbc has no user-info (user:pw@host, a DATABASE_URL with jdbc: put before it): with a port
      // it would take "user:pw@host" for the host name, and send the password to the name lookup.
      boolean userInfo = USER_INFO.matcher(url).lookingAt();
      try {
        if (userInfo) {
          throw new IllegalArgumentException("user-info");
        }
        ds.setUrl(url);
      } catch (IllegalArgumentException e) {
        // Neither the driver's message nor the exception as a cause: it quotes the whole URL,
        // password included.
        throw new JournalException("the PostgreSQL driver cannot read the URL " + redacted(url) + (userInfo
            ? ": it takes the user and password as ?user=...&password=... (or --user and IDEM_JDBC_PASSWORD),"
                + " not as user:password@ before the host"
            : " (a typo in its host, port or parameters?)"), null);
      }
      if (user != null) {
        ds.setUser(user);
      }
      if (pw != null) {
        ds.setPassword(pw);
      }
      return ds;
    }
    if (url.startsWith("jdbc:sqlite:")) {
      // As the journal reads the URL (StoreOpener), so that an app's URL in URI form
      // (jdbc:sqlite:file:///var/app.db) names the file it names here too.
      Path path = StoreOpener.sqliteFileOf(url);
      if (path == null) {
        throw new JournalException("no journal at " + redacted(url) + ": the URL names no database file (an in-memory"
            + " database lives only in its process)", null);
      }
      if (Files.isDirectory(path)) {
        throw new JournalException(path + " is a directory; give the journal's database file (it is "
            + path.resolve("idem-journal.db") + " for an embedded journal), or use --dir " + path, null);
      }
      if (!Files.isRegularFile(path)) {
        throw new JournalException("no journal at " + path + ": the file does not exist", null);
      }
      if (!toChange) {
        org.sqlite.SQLiteDataSource ds = new org.sqlite.SQLiteDataSource();
        ds.setUrl(url); // read as a file, read-only: JdbcJournal.openReadOnly takes no connection of it
        return ds;
      }
      return exclusive(path, url);
    }
    if (url.startsWith("jdbc:h2:")) {
      // H2's own way to give the credentials is in the URL (;USER=sa;PASSWORD=pw). Its DataSource
      // always passes a user and password too ("" by default), and H2 refuses a URL setting that
      // another value of the same property contradicts ("Duplicate property", 90066). So the URL's
      // are moved onto the DataSource, which also keeps the password out of the URL H2 sees. H2
      // reads setting names in any case, so they are matched in any case here too.
      StringBuilder rest = new StringBuilder();
      String urlUser = null;
      String urlPassword = null;
      List<String> parts = h2Settings(url);
      for (int i = 0; i < parts.size(); i++) {
        String part = parts.get(i);
        int eq = part.indexOf('=');
        String name = i == 0 || eq < 0 ? "" : part.substring(0, eq).toUpperCase(Locale.ROOT);
        if (name.equals("USER")) {
          urlUser = unescape(part.substring(eq + 1));
        } else if (name.equals("PASSWORD")) {
          urlPassword = unescape(part.substring(eq + 1));
        } else if (!name.equals("IFEXISTS")) {
          // An IFEXISTS setting is dropped, whatever its value: the CLI sets its own below. The
          // app's URL may say IFEXISTS=FALSE, which here would create an empty database.
          rest.append(i == 0 ? "" : ";").append(part);
        }
      }
      if (urlUser != null && user != null) {
        throw usage("--user and the URL's USER= both give the user; give it once");
      }
      if (urlPassword != null && pw != null) {
        throw usage((password != null ? "--password" : "IDEM_JDBC_PASSWORD") + " and the URL's PASSWORD= both give"
            + " the password; give it once");
      }
      JdbcDataSource ds = new JdbcDataSource();
      // IFEXISTS: an operator's typo must not create an empty database that then reads as "0 operations".
      ds.setURL(rest + ";IFEXISTS=TRUE");
      ds.setUser(urlUser != null ? urlUser : user == null ? "" : user);
      ds.setPassword(urlPassword != null ? urlPassword : pw == null ? "" : pw);
      return toChange ? new ExclusiveH2DataSource(ds) : ds;
    }
    throw new JournalException("unsupported JDBC URL (use jdbc:sqlite:, jdbc:postgresql: or jdbc:h2:)", null);
  }

  /**
   * An H2 URL's parts between its {@code ;} separators, as H2 splits them: a backslash makes the
   * character after it part of the value ({@code PASSWORD=pa\;ss} is the password {@code pa;ss}).
   * The parts keep their escapes, so that the ones passed on to H2 read as they did.
   */
  static List<String> h2Settings(String url) {
    List<String> parts = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < url.length(); i++) {
      char c = url.charAt(i);
      if (c == '\\') {
        i++;
      } else if (c == ';') {
        parts.add(url.substring(start, i));
        start = i + 1;
      }
    }
    parts.add(url.substring(start));
    return parts;
  }

  /** A setting's value as H2 reads it: each backslash dropped, the character after it kept. */
  private static String unescape(String value) {
    StringBuilder b = new StringBuilder(value.length());
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c == '\\' && i + 1 < value.length()) {
        c = value.charAt(++i);
      }
      b.append(c);
    }
    return b.toString();
  }

  /** A changing command's refusal of a journal that its app (or anything else) has open. */
  private static JournalException inUse(String journal, Exception cause) {
    return new JournalException("the journal " + journal + " is open in another process (its app, or a tool):"
        + " redrive and purge --yes change a journal only while nothing else has it open. Stop the app, then"
        + " run the command again", cause);
  }

  /** Bad usage (exit status 2) of the command these options belong to. */
  private ParameterException usage(String message) {
    return new ParameterException(command.commandLine(), message);
  }

  /**
   * {@code url} as a message may show it: every password in it replaced (H2's {@code ;PASSWORD=},
   * a query's {@code password=} or {@code sslpassword=}, whatever the case of the name, and the
   * user-info's {@code user:pw@}). Also applied to a whole message that quotes URLs (picocli's usage
   * errors): each password ends where its parameter does, so the rest of the message stays.
   */
  static String redacted(String url) {
    String settingsHidden = QUERY_PASSWORD.matcher(H2_PASSWORD.matcher(url).replaceAll("$1***")).replaceAll("$1***");
    // The user-info last: a password setting's value may hold an @ that is not the host's.
    return USER_INFO_PASSWORD.matcher(settingsHidden).replaceAll("$1***@");
  }

  /**
   * A SQLite file's DataSource for a command that changes its journal, after a check that no other
   * connection has the file open. A journal in an app's SQLite file has no lock file of its own,
   * and its open settles what a dead process left in flight: beside a running app, it would take
   * back the app's claims on the requests it is sending. In WAL mode every open connection holds a
   * shared lock on the file, so an exclusive one is refused while the app runs. The journal's
   * connection then uses SQLite's exclusive locking mode: it takes the lock at its first read and
   * keeps it until it closes, so an app started meanwhile waits instead of running beside it.
   */
  private static DataSource exclusive(Path path, String url) throws JournalException {
    SQLiteConfig check = new SQLiteConfig();
    check.setLockingMode(SQLiteConfig.LockingMode.EXCLUSIVE);
    check.setBusyTimeout((int) OTHER_CONNECTION_WAIT.toMillis());
    try (Connection c = check.createConnection(url); Statement st = c.createStatement()) {
      st.execute("BEGIN EXCLUSIVE");
      st.execute("ROLLBACK");
    } catch (SQLException e) {
      int primary = e.getErrorCode() & 0xff; // an extended code (SQLITE_BUSY_SNAPSHOT) carries its primary one
      if (primary == SQLiteErrorCode.SQLITE_BUSY.code || primary == SQLiteErrorCode.SQLITE_LOCKED.code) {
        throw inUse(path.toString(), e);
      }
      throw new JournalException("could not open the journal " + path + ": " + e.getMessage(), e);
    }
    SQLiteConfig config = new SQLiteConfig();
    config.setLockingMode(SQLiteConfig.LockingMode.EXCLUSIVE);
    org.sqlite.SQLiteDataSource ds = new org.sqlite.SQLiteDataSource(config);
    ds.setUrl(url);
    return ds;
  }
}
