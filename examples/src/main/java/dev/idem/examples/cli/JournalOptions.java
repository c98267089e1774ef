package dev.idem.examples.cli;

import dev.idem.core.JournalException;
import dev.idem.jdbc.JdbcJournal;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Option;

/** Where the journal is: an H2 directory, or a JDBC URL (H2 or PostgreSQL). */
final class JournalOptions {
  @ArgGroup(exclusive = true, multiplicity = "1")
  Location location;

  @Option(names = "--user", description = "JDBC user, with --jdbc-url.")
  String user;

  @Option(names = "--password", description = "JDBC password, with --jdbc-url (prefer the IDEM_JDBC_PASSWORD"
      + " environment variable, which stays out of the process list).")
  String password;

  static final class Location {
    @Option(names = "--h2", paramLabel = "DIR", description = "Directory of an embedded H2 journal.")
    Path h2;

    @Option(names = "--jdbc-url", paramLabel = "URL", description = "JDBC URL of a journal database.")
    String jdbcUrl;
  }

  /**
   * Opens the journal, refusing to create one: an operator pointing at the wrong directory must
   * get an error, not an empty new journal.
   */
  JdbcJournal open() throws JournalException {
    if (location.h2 != null) {
      Path dir = location.h2;
      if (!Files.isDirectory(dir)) {
        throw new JournalException("no journal at " + dir + ": the directory does not exist", null);
      }
      try (var files = Files.list(dir)) {
        if (files.noneMatch(p -> p.getFileName().toString().endsWith(".mv.db"))) {
          throw new JournalException("no journal at " + dir + ": the directory holds no H2 database file", null);
        }
      } catch (java.io.IOException e) {
        throw new JournalException("cannot read " + dir + ": " + e.getMessage(), e);
      }
      return JdbcJournal.openH2(dir);
    }
    return JdbcJournal.dataSource(dataSource(location.jdbcUrl)).open();
  }

  private DataSource dataSource(String url) throws JournalException {
    String pw = password != null ? password : System.getenv("IDEM_JDBC_PASSWORD");
    if (url.startsWith("jdbc:postgresql:")) {
      PGSimpleDataSource ds = new PGSimpleDataSource();
      ds.setUrl(url);
      if (user != null) {
        ds.setUser(user);
      }
      if (pw != null) {
        ds.setPassword(pw);
      }
      return ds;
    }
    if (url.startsWith("jdbc:h2:")) {
      JdbcDataSource ds = new JdbcDataSource();
      ds.setURL(url);
      ds.setUser(user == null ? "" : user);
      ds.setPassword(pw == null ? "" : pw);
      return ds;
    }
    throw new JournalException("unsupported JDBC URL (use jdbc:h2: or jdbc:postgresql:)", null);
  }
}
