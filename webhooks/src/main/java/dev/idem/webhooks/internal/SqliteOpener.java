package dev.idem.webhooks.internal;

import dev.idem.webhooks.WebhookInboxException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Set;

/**
 * Opens the embedded inbox: a SQLite file in WAL mode with {@code synchronous=FULL} (a commit is on
 * disk when it returns; this combination lost nothing in this project's kill -9 loops),
 * a busy timeout, and owner-only permissions on the directory and the files. The process holds an
 * exclusive lock on {@code inbox.lock} while the inbox is open, so that one process owns it; the
 * operating system releases the lock when the process dies, even by SIGKILL.
 */
public final class SqliteOpener {
  public static final String DB_FILE = "inbox.db";
  private static final Duration BUSY = Duration.ofSeconds(5);

  private SqliteOpener() {}

  /** The lock that makes this process the inbox's only owner; release it last. */
  public static FileLock lock(Path dir) {
    try {
      createPrivateDir(dir);
      FileChannel ch = FileChannel.open(dir.resolve("inbox.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = ch.tryLock();
      } catch (java.nio.channels.OverlappingFileLockException e) {
        lock = null;  // this very process has it open already
      } catch (IOException | RuntimeException e) {
        ch.close();
        throw e;
      }
      if (lock == null) {
        ch.close();
        throw new WebhookInboxException("another process (or another inbox in this one) has the webhook inbox in " + dir
            + " open; an embedded inbox has one owner (use PostgreSQL for several instances)", null);
      }
      return lock;
    } catch (IOException e) {
      throw new WebhookInboxException("could not lock the webhook inbox in " + dir + ": " + e.getMessage(), e);
    }
  }

  /** A connection source for {@code dir/inbox.db}, with the pragmas applied on every connection. */
  public static ConnectionSource source(Path dir) {
    Path db = dir.resolve(DB_FILE);
    ensureDriver();
    try {
      createPrivateDir(dir);
      if (!Files.exists(db)) {
        // Created before SQLite opens it, owner-only: SQLite gives its -wal and -shm files the
        // database file's permissions.
        if (isPosix()) {
          Files.createFile(db, PosixFilePermissions.asFileAttribute(Set.of(PosixFilePermission.OWNER_READ,
              PosixFilePermission.OWNER_WRITE)));
        } else {
          Files.createFile(db);
        }
      }
    } catch (java.nio.file.FileAlreadyExistsException e) {
      // another opener raced us; the lock decides who owns it
    } catch (IOException e) {
      throw new WebhookInboxException("could not create the webhook inbox file " + db + ": " + e.getMessage(), e);
    }
    String url = "jdbc:sqlite:" + db.toAbsolutePath();
    return () -> {
      Connection c = DriverManager.getConnection(url);
      try (Statement s = c.createStatement()) {
        try (ResultSet rs = s.executeQuery("PRAGMA journal_mode=WAL")) {
          if (!rs.next() || !"wal".equalsIgnoreCase(rs.getString(1))) {
            throw new SQLException("SQLite refused journal_mode=WAL for " + db);
          }
        }
        s.execute("PRAGMA synchronous=FULL");
        s.execute("PRAGMA busy_timeout=" + BUSY.toMillis());
      } catch (SQLException e) {
        c.close();
        throw e;
      }
      return c;
    };
  }

  /**
   * Read-only connections to the inbox in {@code dir}, for inspection beside the owning process:
   * no lock, nothing created, no byte written (SQLite's read-only mode). Without a {@code -wal}
   * file (closed cleanly) the database is read as immutable, so not even a {@code -shm} file
   * appears; with one, SQLite reads it through the owner's {@code -shm} index. The same rules as
   * the journal's read-only open.
   *
   * @throws WebhookInboxException if {@code dir} holds no inbox (nothing is created)
   */
  public static ConnectionSource readOnlySource(Path dir) {
    if (Files.isRegularFile(dir)) {
      throw new WebhookInboxException(dir + " is a file; give the webhook inbox's directory (it holds " + DB_FILE + ")",
          null);
    }
    if (!Files.isDirectory(dir)) {
      throw new WebhookInboxException("no webhook inbox at " + dir + ": the directory does not exist", null);
    }
    Path db = dir.resolve(DB_FILE).toAbsolutePath();
    if (!Files.isRegularFile(db)) {
      throw new WebhookInboxException("no webhook inbox at " + dir + ": it has no " + DB_FILE, null);
    }
    ensureDriver();
    org.sqlite.SQLiteConfig config = new org.sqlite.SQLiteConfig();
    config.setReadOnly(true);
    config.setOpenMode(org.sqlite.SQLiteOpenMode.READONLY);
    config.setOpenMode(org.sqlite.SQLiteOpenMode.OPEN_URI);
    config.setBusyTimeout((int) BUSY.toMillis());
    return () -> {
      org.sqlite.SQLiteDataSource ds = new org.sqlite.SQLiteDataSource(config);
      boolean immutable = !Files.exists(db.resolveSibling(DB_FILE + "-wal"));
      // readonly_shm: with a -wal file left by a killed owner, SQLite would otherwise rebuild the -shm
      // index in place, writing to the files this open promises only to read.
      ds.setUrl("jdbc:sqlite:" + db.toUri() + (immutable ? "?immutable=1" : "?readonly_shm=1"));
      return ds.getConnection();
    };
  }

  private static void ensureDriver() {
    try {
      Class.forName("org.sqlite.JDBC");
      org.sqlite.SQLiteJDBCLoader.initialize();
    } catch (Throwable e) {
      String tmp = System.getProperty("org.sqlite.tmpdir", System.getProperty("java.io.tmpdir"));
      throw new WebhookInboxException("could not load SQLite's native library (" + e + "). sqlite-jdbc extracts it"
          + " into " + tmp + " (the system property org.sqlite.tmpdir, else java.io.tmpdir) and loads it from"
          + " there; if that directory is mounted noexec or not writable, start the JVM with"
          + " -Dorg.sqlite.tmpdir=<a writable directory that allows execution>", e);
    }
  }

  private static boolean isPosix() {
    return FileSystems.getDefault().supportedFileAttributeViews().contains("posix");
  }

  private static void createPrivateDir(Path dir) throws IOException {
    if (Files.isDirectory(dir)) {
      return;
    }
    if (isPosix()) {
      Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } else {
      Files.createDirectories(dir);
    }
  }
}
