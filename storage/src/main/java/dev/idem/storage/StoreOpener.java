package dev.idem.storage;

import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * Opens the database of a store (the journal, the guard's store or the webhook inbox): an embedded
 * SQLite store in its files ({@link Layout}), or the database of an app's DataSource (PostgreSQL,
 * SQLite or H2). It picks the {@link Store}, migrates
 * the schema, and on any failure undoes what it did (connections, the process lock), so a failed
 * open leaves nothing held.
 *
 * <p>The store itself is built by a {@link Finish} step that runs before the open counts as done:
 * its first reads and writes (the sweep for unknown states, crash recovery) can still fail the
 * open, and then everything is released as for any other failure.
 */
public final class StoreOpener {
  private static final Logger LOG = LoggerFactory.getLogger(StoreOpener.class);
  /** How long SQLite waits for a lock held by another connection before failing: 10 s. */
  static final Duration SQLITE_BUSY_TIMEOUT = Duration.ofSeconds(10);

  /** Builds the journal over an opened store. Its failure fails, and undoes, the open. */
  public interface Finish<T> {
    /**
     * @param name the journal's name for messages and logs (directory or JDBC URL)
     * @param opened what was opened, and what the journal must release when it closes
     */
    T finish(String name, Dialect dialect, Store store, int schemaVersion, Opened opened)
        throws IdempotencyException;
  }

  /**
   * What an open found and holds. Its {@link #close} runs once: a store's close is idempotent, and
   * a second one must not mark a clean close again (that would delete the open marker of a store
   * opened on the same file since, whose crash would then look like a clean close) nor release a
   * lock again. Thread-safe.
   */
  public static final class Opened {
    private final EmbeddedFiles files;
    private final boolean singleProcess;
    private final boolean crashed;
    private final StorageSize size;
    private final AutoCloseable fileLock;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param files the embedded journal's files (released on close), or null for a DataSource
     * @param singleProcess true if no other process can use the database (embedded, or an app's
     *     SQLite or H2 DataSource): then an IN_FLIGHT lease found at open belongs to a dead process
     * @param crashed true if the last process stopped without closing the journal (embedded only)
     * @param size what the store takes on disk, for its {@link StorageSizeGauge}
     * @param fileLock the single-owner lock of a store in an app's SQLite file (released on close),
     *     or null
     */
    public Opened(EmbeddedFiles files, boolean singleProcess, boolean crashed, StorageSize size,
        AutoCloseable fileLock) {
      this.files = files;
      this.singleProcess = singleProcess;
      this.crashed = crashed;
      this.size = size;
      this.fileLock = fileLock;
    }

    /** What an open found, holding no lock beside an app's SQLite file. */
    public Opened(EmbeddedFiles files, boolean singleProcess, boolean crashed, StorageSize size) {
      this(files, singleProcess, crashed, size, null);
    }

    /** The embedded journal's files (released on close), or null for a DataSource. */
    public EmbeddedFiles files() {
      return files;
    }

    /** True if no other process can use the database: an IN_FLIGHT lease found at open is a dead process's. */
    public boolean singleProcess() {
      return singleProcess;
    }

    /** True if the last process stopped without closing the journal (embedded only). */
    public boolean crashed() {
      return crashed;
    }

    /** What the store takes on disk, for its {@link StorageSizeGauge}. */
    public StorageSize size() {
      return size;
    }

    /** The single-owner lock of a store in an app's SQLite file (released on close), or null. */
    public AutoCloseable fileLock() {
      return fileLock;
    }

    /**
     * Closes {@code store}, then, for an embedded store, marks a clean close (only if no failed
     * write broke the store: then the next open recovers as after a crash) and releases the
     * single-owner lock (for a store in an app's SQLite file, its {@link #fileLock()}), whatever the
     * close threw. Only the first call does anything; later ones return at once (the files may
     * belong to another open by then).
     *
     * @param how how it was closed ({@link Store#close(String)})
     */
    public void close(Store store, String how) throws IdempotencyException {
      if (!closed.compareAndSet(false, true)) {
        return;
      }
      boolean clean = false;
      try {
        store.close(how);
        clean = !store.broken();
      } finally {
        if (files != null) {
          if (clean) {
            files.markClosed();
          } else {
            files.markClosedAfterFailure();
          }
          files.close();
        }
        closeQuietly(fileLock);
      }
    }
  }

  private final Schema schema;
  private final boolean syncToDisk;
  private final Duration deferredCommitInterval;
  private final Clock clock;

  /**
   * @param schema the store's tables and migrations
   * @param syncToDisk H2 only: follow each group commit with a disk sync
   * @param deferredCommitInterval the longest wait of a deferred write for its commit
   * @param clock for the schema migration records
   */
  public StoreOpener(Schema schema, boolean syncToDisk, Duration deferredCommitInterval, Clock clock) {
    this.schema = schema;
    this.syncToDisk = syncToDisk;
    this.deferredCommitInterval = deferredCommitInterval;
    this.clock = clock;
  }

  /**
   * Opens (creating if needed) the embedded SQLite store {@code requested} ({@link Layout#journal}
   * for the journal's; {@link EmbeddedFiles}): WAL mode, a busy timeout, one writer connection with
   * group commit; no write is reported durable before it is on the disk (SQLite's
   * {@code synchronous=FULL}, or, for a store no other connection writes, the store's sync of the
   * {@code -wal} file after each commit: {@link #walSyncOf}). A directory already open in this JVM
   * is refused, as is one open in another process, by the lock file ({@link EmbeddedFiles}); so is
   * a database file a store of this schema has open through an app's DataSource
   * ({@link #openDataSource}), in this JVM or another process, by the file's own lock, which both
   * opens take.
   *
   * @throws IllegalArgumentException if {@code requested} names another store than the schema
   *     (the file's lock is named after the store: the two opens would lock different files)
   */
  public <T> T openEmbedded(Layout requested, Finish<T> finish) throws IdempotencyException {
    if (!requested.what().equals(schema.what())) {
      throw new IllegalArgumentException("the layout names the " + requested.what() + ", the schema the "
          + schema.what() + ": an open through a DataSource would lock another file than this one");
    }
    EmbeddedFiles files = EmbeddedFiles.prepare(requested);
    Layout layout = files.layout();
    Path db = layout.database();
    Connection connection = null;
    DiskSync walSync = null;
    Store store = null;
    boolean ours = false;
    try {
      WalCheck.refuseDamaged(schema.what(), layout);
      if (files.expectsId()) {
        files.refuseForeign(idInDatabaseFile(db));
      }
      connection = sqliteDataSource(db, false, false).getConnection();
      String mode = pragma(connection, "journal_mode");
      if (!"wal".equalsIgnoreCase(mode)) {
        // SQLite answers a journal_mode=WAL it cannot set (no shared memory on the file system,
        // say) with the mode it kept, and sqlite-jdbc does not check: without WAL a commit rewrites
        // pages through a rollback journal, and the read-only tools could no longer read beside it.
        throw new JournalException("SQLite kept " + db + " in journal mode " + mode + " instead of WAL (the file"
            + " system may not support its shared memory): move it to a local disk", null);
      }
      // The file SQLite has open now: commits are acknowledged only while the path still leads to it.
      FileIdentity opened = files.databaseOpened();
      // SQLite's own check of every page and every index entry, at open: a damaged file is refused
      // with an explanation before the store reads a row from it, rather than failing later on
      // whichever page a query happens to touch. integrity_check, not quick_check: a damaged entry
      // of the primary-key index would make a finished operation look absent, and a begin of the
      // same key would then create and send it again; only the full check compares each index with
      // its table. Its cost grows with the store (see the README's benchmark figures).
      if (!"ok".equalsIgnoreCase(pragma(connection, "integrity_check(1)"))) {
        throw StoreErrors.corrupt(schema.what(), db, "SQLite's integrity_check failed", null);
      }
      // Before the migration, which would turn an emptied file into a fresh journal.
      String newId = files.reconcileId(Meta.getIfPresent(connection, schema.metaTable(), Meta.JOURNAL_ID));
      ours = true;
      Migrator migrator = new Migrator(Dialect.SQLITE, schema, clock);
      int version = migrator.migrate(connection);
      if (newId != null) {
        Meta.put(connection, schema.metaTable(), Meta.JOURNAL_ID, newId);
      }
      files.markOpen(newId);
      String name = (layout.ownsFiles() ? layout.directory() : db).toString();
      String shared = layout.ownsFiles() ? null
          : ForeignWriters.knownAtOpen(connection, schema.metaTable(), migrator.tables());
      walSync = shared == null ? walSyncOf(layout, connection, files) : null;
      ForeignWriters watch = walSync != null && !layout.ownsFiles()
          ? ForeignWriters.watch(connection, schema.metaTable()) : null;
      if (shared != null) {
        LOG.debug("Idem {} {}: commits sync inside SQLite's commit (synchronous=FULL): other connections write"
            + " it ({})", schema.what(), name, shared);
      }
      store = new SingleConnectionStore(schema.what(), name, connection, walSync, deferredCommitInterval,
          !layout.ownsFiles(), watch, opened, files.lockFile(),
          // Only a store that owns its files is the database's only writer: in an app's file, the
          // app's connections may commit after the close's checkpoint.
          layout.ownsFiles() ? files::markCheckpointedAtClose : null);
      return finish.finish(name, Dialect.SQLITE, store, version, new Opened(files, true, files.crashed(),
          StorageSize.ofFiles(db, layout.wal())));
    } catch (SQLException | IdempotencyException | RuntimeException | Error e) {
      closeQuietly(store, walSync, connection);
      if (connection != null && ours) {
        // SQLite opened the file, so its close just now was its last: it may have checkpointed the
        // -wal file (this open's commits, or a crashed process's) into the database and removed
        // it, under an open marker (this open's, or the crashed process's) that says the -wal file
        // holds commits. Left so, every later open, of any version, is refused as one whose
        // acknowledged commits were lost. Marked as a failed close is, while the locks are held.
        // Only for the store's own file: checkpointed into another one (refused as not this
        // store's, or as emptied), those commits are not in the file the marker speaks for.
        try {
          files.markFailedOpen();
        } catch (RuntimeException markFailed) {
          e.addSuppressed(markFailed);
        }
      }
      closeQuietly(files);
      throw openFailure(db, e);
    }
  }

  /**
   * The store id in the database file's own pages, read as immutable (no lock taken, nothing
   * written, the {@code -wal} file not read); null if it has none or it cannot be read so (SQLite's
   * read-write open then decides, as before). For {@link EmbeddedFiles#refuseForeign}.
   */
  private String idInDatabaseFile(Path db) {
    try {
      if (Files.size(db) == 0) {
        return null;
      }
      try (Connection c = sqliteDataSource(db, true, true).getConnection()) {
        return Meta.getIfPresent(c, schema.metaTable(), Meta.JOURNAL_ID);
      }
    } catch (IOException | SQLException | RuntimeException e) {
      LOG.debug("Idem {} {}: cannot read the id in the database file before opening it ({})", schema.what(), db,
          e.toString());
      return null;
    }
  }

  /**
   * For a store no other connection writes: commits append to the {@code -wal} file without
   * syncing ({@code synchronous=NORMAL}), and the store syncs that file after each group commit,
   * outside its statement lock ({@link DiskSync#ofWal}). The guarantee is the same as
   * {@code synchronous=FULL}'s: no write is reported durable before the sync that covers it
   * returned. What changes is that the next group's statements run during the sync instead of
   * waiting for it; the next commit still waits (the store runs one commit round at a time), so
   * frames reach the file in commit order, after the ones before them are on the disk, as
   * {@link WalCheck} assumes.
   *
   * <p>The journal and the inbox own their files. The guard's file may be shared with the app's
   * connections (transactional mode), whose commits could write frames between this store's commit
   * and its sync: a power loss in that window could leave damage under their commit, which
   * {@link WalCheck} refuses as corruption. So a database known to be shared at open keeps
   * {@code synchronous=FULL} (the caller does not ask for this sync), and one not known to be is
   * watched, and switches to FULL for good when another writer shows up ({@link ForeignWriters}).
   */
  private DiskSync walSyncOf(Layout layout, Connection connection, EmbeddedFiles files)
      throws JournalException, SQLException {
    DiskSync sync = null;
    try {
      sync = DiskSync.ofWal(layout.wal());
      files.syncDirectory(); // the -wal file may be new; SQLite's first FULL sync would sync its entry
      try (Statement st = connection.createStatement()) {
        st.execute("PRAGMA synchronous=NORMAL");
        // No page of an uncommitted transaction reaches the -wal file before its commit: such a
        // spill, written during the previous group's sync, would put frames after a commit that a
        // power loss may have torn, which WalCheck refuses as damage under a later transaction. A
        // transaction holds the units of one commit round, bounded by the callers' concurrency.
        st.execute("PRAGMA cache_spill=OFF");
      }
      return sync;
    } catch (IOException e) {
      closeQuietly(sync);
      throw new JournalException("cannot open the " + schema.what() + "'s write-ahead log " + layout.wal()
          + " for syncing: " + e, e);
    } catch (SQLException | RuntimeException e) {
      closeQuietly(sync);
      throw e;
    }
  }

  /**
   * Opens the embedded store {@code requested} for reading only, without taking it over: no
   * lock, no migration, no recovery, no write of any byte (SQLite's read-only open mode). For
   * inspection tools such as the journal CLI.
   *
   * @throws JournalException if the directory holds no such store, or it cannot be read
   */
  public <T> T openEmbeddedReadOnly(Layout requested, Finish<T> finish) throws IdempotencyException {
    Path dir = requested.directory().toAbsolutePath().normalize();
    Layout layout = requested.in(dir);
    String what = schema.what();
    if (layout.ownsFiles() && Files.isRegularFile(dir)) {
      throw new JournalException(dir + " is a file; give the " + what + "'s directory (it holds "
          + layout.databaseFile() + ")", null);
    }
    if (!Files.isDirectory(dir)) {
      try {
        EmbeddedFiles.refuseDanglingLink(dir, layout);
      } catch (JournalException e) {
        throw e;
      } catch (IOException e) {
        LOG.debug("Idem {} {}: cannot read a link on its path ({})", what, dir, e.toString());
      }
      throw new JournalException("no " + what + " at " + (layout.ownsFiles() ? dir : layout.database())
          + ": the directory " + dir + " does not exist", null);
    }
    try {
      // The files SQLite reads through a link, -wal and -shm included, are the target's.
      layout = EmbeddedFiles.atRealFile(layout);
    } catch (JournalException e) {
      // Its own refusal (a linked database file, a link into a missing directory), with the reason
      // and the fix, as the writable open gives it; JournalException is an IOException too.
      throw e;
    } catch (IOException e) {
      throw new JournalException("cannot resolve the real path of " + layout.database() + ": " + e, e);
    }
    dir = layout.directory();
    Path db = layout.database();
    if (!Files.exists(db)) {
      if (Files.exists(layout.h2())) {
        throw new JournalException(dir + " holds an H2 journal of Idem 0.1 (" + layout.h2().getFileName()
            + "); this version reads SQLite journals only: inspect it with the Idem 0.1 CLI", null);
      }
      throw new JournalException("no " + what + " at " + (layout.ownsFiles() ? dir + ": it has no "
          + layout.databaseFile() : db + ": the file does not exist"), null);
    }
    if (Files.isDirectory(db)) {
      throw new JournalException(db + " is a directory; give the " + what + "'s database file", null);
    }
    Connection connection = null;
    ReadOnlyStore store = null;
    try {
      // A cleanly closed journal has no -wal file: everything is in the database file, which is then
      // read as immutable (no lock, no -wal or -shm file created), each read checked against an app
      // that opens it meanwhile (UnchangedFiles). With a -wal file (the app runs, or crashed),
      // SQLite must read it, through the -shm index, which readonly_shm keeps read-only: even after
      // a kill -9, when SQLite would otherwise rebuild the index, no byte is written.
      // An app's own file (read through --jdbc-url) may not be in WAL mode: a rollback journal
      // beside it may be a crashed transaction's, which an immutable read would not see (it would
      // read the half-written pages); the read-only mode refuses such a journal instead.
      Path wal = layout.wal();
      boolean walExists = Files.exists(wal);
      boolean immutable = !walExists && !Files.exists(layout.rollbackJournal());
      UnchangedFiles unchanged = immutable ? UnchangedFiles.of(what, db, wal) : null;
      Path shm = layout.shm();
      if (walExists && !Files.exists(shm)) {
        throw new JournalException("the " + what + " " + db + " has a " + wal.getFileName() + " file but no "
            + shm.getFileName() + " index beside it, and a read-only open does not rebuild one (that would"
            + " write). Open the " + what + " with its app once (which rebuilds it), then read it", null);
      }
      connection = sqliteDataSource(db, true, immutable).getConnection();
      String name = layout.ownsFiles() ? dir.toString() : db.toString();
      store = new ReadOnlyStore(schema.what(), name, connection, unchanged);
      int version;
      try {
        version = new Migrator(Dialect.SQLITE, schema, clock).currentVersionReadOnly(connection);
      } catch (JournalException e) {
        store.checkUnchanged(null); // a store its app is creating right now is not "not a store"
        throw e;
      }
      store.checkUnchanged(null);
      return finish.finish(name, Dialect.SQLITE, store, version,
          new Opened(null, true, false, StorageSize.ofFiles(db, wal)));
    } catch (SQLException | IdempotencyException | RuntimeException | Error e) {
      closeQuietly(connection);
      if (store != null && e instanceof SQLException failure) {
        store.checkUnchanged(failure);
      }
      throw openFailure(db, e);
    }
  }

  /**
   * Opens the journal in the database of an app's {@code dataSource}: PostgreSQL gets a connection
   * per call, and the open holds at most one at a time (the migration's is closed before the
   * finish step runs), so a pool of one connection suffices; SQLite and H2 one connection for the
   * journal's life. The DataSource stays the app's.
   * A SQLite file is locked for the store ({@link SqliteFileLock}) before the first write, and
   * refused if another open of this store has it, in this JVM or another process, embedded
   * ({@link #openEmbedded}) or through a DataSource.
   */
  public <T> T openDataSource(DataSource dataSource, Finish<T> finish) throws IdempotencyException {
    Dialect dialect;
    String name;
    Migrator migrator = null;
    int version = 0;
    try (Connection c = dataSource.getConnection()) {
      dialect = dialectOf(c);
      // Once, here: the name is in toString(), every StoreErrors message and the health details.
      name = JdbcUrls.shown(c.getMetaData().getURL());
      if (dialect == Dialect.POSTGRESQL) {
        refuseNonUtf8(c, name);
        migrator = new Migrator(dialect, schema, clock);
        version = migrator.migrate(c);
      }
    } catch (SQLException e) {
      throw StoreErrors.wrap(schema.what(), "open", e);
    }
    if (dialect != Dialect.POSTGRESQL) {
      return openSingleConnection(name, dialect, dataSource, finish);
    }
    // The migration's connection is back in the pool before the finish step runs: that step's
    // first reads (the journal's sweep for unknown states) take connections of their own, and an
    // open holding one while asking for another would need two at once, failing on a pool of one
    // and waiting on itself on a pool the app's other work has all but exhausted.
    return finish.finish(name, dialect, new DataSourceStore(schema.what(), name, dataSource, dialect), version,
        new Opened(null, false, false, StorageSize.ofTables(schema.what(), name, dataSource, migrator.tables())));
  }

  /**
   * Opens the journal in the database of {@code dataSource} for reading only, for inspection tools
   * such as the CLI's {@code --jdbc-url}: one connection, whose reads are all one read transaction
   * (PostgreSQL's REPEATABLE READ and H2's SERIALIZABLE take one snapshot at the first read, as
   * SQLite's read transaction does), so a count and a listing agree whatever the app writes
   * meanwhile. No migration, no recovery; every write is refused. The connection is closed with
   * the store; the DataSource stays the caller's. A plain {@link SQLiteDataSource} on a file is not
   * asked for a connection: its file is read as {@link #openEmbeddedReadOnly} reads one, with no
   * byte written.
   *
   * @throws JournalException if the database holds no journal of this schema version, or cannot be read
   */
  public <T> T openDataSourceReadOnly(DataSource dataSource, Finish<T> finish) throws IdempotencyException {
    Path file = sqliteFileOf(dataSource);
    if (file != null) {
      // Not through one of the DataSource's connections: those open the file read-write, and when
      // no app has it open, closing one is SQLite's last close, which checkpoints the -wal file
      // into the database and deletes it. A killed app's journal then reads as damaged (its -wal
      // missing) when the app reopens it. The file is read as an embedded store's is instead:
      // SQLite's read-only mode, no byte of its files written.
      return openEmbeddedReadOnly(Layout.file(file, schema.what(), schema.owner().getSimpleName()), finish);
    }
    Connection c = null;
    try {
      c = dataSource.getConnection();
      Dialect dialect = dialectOf(c);
      String name = JdbcUrls.shown(c.getMetaData().getURL());
      if (dialect != Dialect.SQLITE) {
        c.setReadOnly(true);
        c.setTransactionIsolation(dialect == Dialect.POSTGRESQL ? Connection.TRANSACTION_REPEATABLE_READ
            : Connection.TRANSACTION_SERIALIZABLE);
      }
      int version = new Migrator(dialect, schema, clock).currentVersionReadOnly(c);
      Store store = new ReadOnlyStore(schema.what(), name, c, null);
      return finish.finish(name, dialect, store, version, new Opened(null, dialect != Dialect.POSTGRESQL, false,
          StorageSize.UNKNOWN));
    } catch (SQLException e) {
      closeQuietly(c);
      throw StoreErrors.wrap(schema.what(), "read-only open", e);
    } catch (IdempotencyException | RuntimeException e) {
      closeQuietly(c);
      throw e;
    }
  }

  /**
   * The database file of a plain {@link SQLiteDataSource}, or null for any other DataSource, an
   * in-memory database, or a URL this cannot read as a file's.
   */
  static Path sqliteFileOf(DataSource dataSource) {
    return dataSource instanceof SQLiteDataSource sqlite ? sqliteFileOf(sqlite.getUrl()) : null;
  }

  /**
   * The database file a {@code jdbc:sqlite:} URL names, in either of the forms sqlite-jdbc takes: a
   * path ({@code jdbc:sqlite:/var/app.db?opts}) or a URI file name
   * ({@code jdbc:sqlite:file:///var/app.db?cache=shared}). Null for null, any other URL, an
   * in-memory database, or a URL this cannot read as a file's. For tools that take an app's URL
   * (the CLI's {@code --jdbc-url}), so that they read it as the stores do.
   *
   * @param url a JDBC URL, or null
   * @return the file, not resolved against the working directory, or null
   */
  public static Path sqliteFileOf(String url) {
    if (url == null || !url.startsWith("jdbc:sqlite:")) {
      return null;
    }
    String rest = url.substring("jdbc:sqlite:".length());
    try {
      if (rest.startsWith("file:")) {
        URI uri = new URI(rest);
        String query = uri.getRawQuery();
        return uri.getPath() == null || uri.getPath().isEmpty() || query != null && query.contains("mode=memory")
            ? null : Path.of(uri.getPath());
      }
      int q = rest.indexOf('?');
      String path = q < 0 ? rest : rest.substring(0, q);
      return path.isEmpty() || path.startsWith(":") ? null : Path.of(path);
    } catch (URISyntaxException | InvalidPathException e) {
      return null;
    }
  }

  /**
   * Refuses, before anything is created, a PostgreSQL database or connection through which text
   * would not be kept exactly as given:
   * <ul>
   *   <li>a database whose {@code server_encoding} is LATIN1, WIN1252, ...: a text with a character
   *       that has no equivalent there (a server's reason with "€" or "–") fails the write (SQLState
   *       22P05), and a failed outcome write after an attempt went out leaves the operation
   *       IN_FLIGHT, sent again by every resume;</li>
   *   <li>SQL_ASCII: it stores whatever bytes it is given (so the driver's UTF-8 round-trips), but
   *       counts a column's length in bytes: a reason of up to its column's length in characters,
   *       some of them outside ASCII, is too long for it (22001) and fails the outcome write in the
   *       same way; and it checks nothing that other clients write;</li>
   *   <li>a connection whose {@code client_encoding} is not UTF8 (a pool's init SQL, a role's or the
   *       database's default, {@code PGCLIENTENCODING} with {@code allowEncodingChanges}): the
   *       server converts text to and from it, so non-ASCII characters are refused or silently
   *       changed (a euro sign read back as "â¬"). The connection the open uses stands for the
   *       others: a pool sets up each of its connections the same way.</li>
   * </ul>
   * Refused at open, the app learns it before anything is sent.
   */
  private void refuseNonUtf8(Connection c, String name) throws SQLException, JournalException {
    String server = show(c, "server_encoding");
    String what = schema.what();
    if (server != null && server.equalsIgnoreCase("SQL_ASCII")) {
      throw new JournalException("the " + what + "'s PostgreSQL database " + name + " has encoding SQL_ASCII, not"
          + " UTF8: SQL_ASCII keeps the bytes it is given but counts a column's length in bytes, not characters,"
          + " so a text within its column's length but with characters outside ASCII (a server's reason with a"
          + " euro sign, 3 bytes in UTF-8) is too long for it, and an outcome that cannot be recorded leaves its"
          + " operation in flight, to be sent again; nor does it check that other clients write valid UTF-8."
          + " Nothing was created in it. Use a database created with ENCODING 'UTF8' (CREATE DATABASE ... ENCODING"
          + " 'UTF8' TEMPLATE template0); the " + what + "'s tables of an earlier Idem version move into it"
          + " unchanged (pg_dump, then pg_restore into the UTF8 database: what Idem wrote is UTF-8 already); see"
          + " docs/fleet.md, \"Database encoding\"", null);
    }
    if (server != null && !server.equalsIgnoreCase("UTF8")) {
      throw new JournalException("the " + what + "'s PostgreSQL database " + name + " has encoding "
          + server + ", not UTF8: a text with a character outside " + server + " (such as a euro sign in a server's"
          + " reason) could not be stored, and an outcome that cannot be recorded leaves its operation in flight,"
          + " to be sent again. Nothing was created in it. Use a database created with ENCODING 'UTF8' (CREATE"
          + " DATABASE ... ENCODING 'UTF8' TEMPLATE template0), or move the data into one (pg_dump, then"
          + " pg_restore into the UTF8 database); see docs/fleet.md, \"Database encoding\"", null);
    }
    String client = show(c, "client_encoding");
    if (client != null && !client.equalsIgnoreCase("UTF8")) {
      throw new JournalException("the " + what + "'s connections to PostgreSQL database " + name + " use"
          + " client_encoding " + client + ", not UTF8: the server converts text to and from " + client + ", so a"
          + " character outside it is refused or stored changed (a euro sign read back as mojibake). Nothing was"
          + " created in it. Remove what sets client_encoding on these connections (a pool's connection init SQL"
          + " such as SET client_encoding, an ALTER ROLE or ALTER DATABASE ... SET client_encoding default, or"
          + " PGCLIENTENCODING with the driver's allowEncodingChanges): the driver talks UTF8 unless told"
          + " otherwise; see docs/fleet.md, \"Database encoding\"", null);
    }
  }

  /** A PostgreSQL setting as {@code SHOW} reports it, or null if it reports none. */
  private static String show(Connection c, String setting) throws SQLException {
    try (Statement st = c.createStatement(); var rs = st.executeQuery("SHOW " + setting)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  private Dialect dialectOf(Connection c) throws SQLException, JournalException {
    Dialect dialect = Dialect.fromProductName(c.getMetaData().getDatabaseProductName());
    if (dialect == null) {
      throw new JournalException("unsupported database for the Idem " + schema.what() + ": "
          + c.getMetaData().getDatabaseProductName() + " (supported: SQLite, PostgreSQL, H2)", null);
    }
    return dialect;
  }

  /** SQLite or H2 from an app's DataSource: one connection held for the journal's life, group commit. */
  private <T> T openSingleConnection(String name, Dialect dialect, DataSource ds, Finish<T> finish)
      throws IdempotencyException {
    Connection main = null;
    DiskSync diskSync = null;
    Store store = null;
    SqliteFileLock lock = null;
    try {
      main = ds.getConnection();
      if (main.getMetaData().isReadOnly()) {
        throw new JournalException("the " + schema.what() + " " + name + " is read-only; the " + schema.what()
            + " needs to write before anything is sent", null);
      }
      if (dialect == Dialect.SQLITE) {
        try (Statement st = main.createStatement()) {
          // Per connection: whatever the app's DataSource says, the journal's commits sync.
          st.execute("PRAGMA synchronous=FULL");
          st.execute("PRAGMA busy_timeout=" + SQLITE_BUSY_TIMEOUT.toMillis());
        }
        // Before the first write, and before the finish step's crash recovery settles what it finds
        // in flight as a dead process's.
        Path file = sqliteFile(main);
        if (file != null) {
          lock = SqliteFileLock.take(file, schema.what(), schema.owner().getSimpleName());
        }
      }
      int version = new Migrator(dialect, schema, clock).migrate(main);
      if (dialect == Dialect.H2 && syncToDisk) {
        diskSync = DiskSync.ofCheckpoint(ds.getConnection());
      }
      // Shared: the app's own connections write this database. An idle store's read left open
      // would pin a snapshot, and with it the -wal file, which the app's checkpoints could then
      // never restart: it would grow with every write the app makes.
      // The lock file is checked on each commit round, as an embedded store's is: removed, it lets
      // another process in. The database file is the app's, and not checked.
      store = new SingleConnectionStore(schema.what(), name, main, diskSync, deferredCommitInterval, true, null,
          null, lock == null ? null : lock.locked());
      return finish.finish(name, dialect, store, version, new Opened(null, true, false, filesOf(dialect, main),
          lock));
    } catch (SQLException e) {
      closeQuietly(store, diskSync, main, lock);
      throw StoreErrors.wrap(schema.what(), "open of " + name, e);
    } catch (IdempotencyException | RuntimeException e) {
      closeQuietly(store, diskSync, main, lock);
      throw e;
    }
  }

  /**
   * The file of the main database of a SQLite connection, as SQLite names it, or null in memory or
   * for a temporary database. {@link SqliteFileLock} locks it by its real path, as an embedded open
   * of the same file does, so that two names of one file share one lock.
   */
  private static Path sqliteFile(Connection c) throws SQLException, JournalException {
    String file;
    try (Statement st = c.createStatement();
        var rs = st.executeQuery("SELECT file FROM pragma_database_list WHERE name = 'main'")) {
      file = rs.next() ? rs.getString(1) : null;
    }
    if (file == null || file.isEmpty()) {
      return null;
    }
    try {
      return Path.of(file).toAbsolutePath().normalize(); // SqliteFileLock locks its real path
    } catch (InvalidPathException e) {
      throw new JournalException("SQLite names its database file " + file + ", which is no path to lock: " + e, e);
    }
  }

  /**
   * SQLite's settings for the journal, and why:
   * <ul>
   *   <li>WAL mode: a commit appends to the {@code -wal} file (one sync) instead of rewriting pages
   *       through a rollback journal (two or more).</li>
   *   <li>{@code synchronous=FULL}: the commit returns only after the WAL is synced, so an
   *       acknowledged begin survives power loss, not only kill -9. A store whose files are its
   *       own then switches to {@code NORMAL} and syncs the WAL itself, outside its lock
   *       ({@link #walSyncOf}); the migration at open still commits with FULL.</li>
   *   <li>A busy timeout, for the read-only tools that may read while the journal writes.</li>
   *   <li>A 16 MiB page cache ({@link #CACHE_KIB}) for the stores that write.</li>
   * </ul>
   */
  /** SQLite's page cache per writable embedded store, in KiB (native memory, filled as pages are read). */
  static final int CACHE_KIB = 16 * 1024;

  static SQLiteDataSource sqliteDataSource(Path db, boolean readOnly, boolean immutable) {
    SQLiteConfig config = new SQLiteConfig();
    if (readOnly) {
      config.setReadOnly(true);
      config.setOpenMode(org.sqlite.SQLiteOpenMode.READONLY);
      config.setOpenMode(org.sqlite.SQLiteOpenMode.OPEN_URI);
    } else {
      config.setJournalMode(SQLiteConfig.JournalMode.WAL);
      config.setSynchronous(SQLiteConfig.SynchronousMode.FULL);
      // 16 MiB of page cache, not SQLite's 2 MB: a resume of 30,000 journaled operations read
      // 14 pages per operation back from the OS with 2 MB (pread, then SQLite's own page
      // handling: a third of the lanes' CPU), and ran 13 to 16 % faster with 16 or 64 MiB
      // (issue 28, P4). Native memory, taken only as pages are read, so a small store stays small.
      config.setCacheSize(-CACHE_KIB);
    }
    config.setBusyTimeout((int) SQLITE_BUSY_TIMEOUT.toMillis());
    // The journal never asks for generated keys. With them on, sqlite-jdbc prepares, runs and
    // finalizes a "SELECT last_insert_rowid()" after every INSERT, under the journal's one writer
    // lock: a fifth of a begin's statement time in a JFR profile with 32 threads.
    config.setGetGeneratedKeys(false);
    SQLiteDataSource ds = new SQLiteDataSource(config);
    ds.setUrl(immutable ? "jdbc:sqlite:" + db.toUri() + "?immutable=1"
        : readOnly ? "jdbc:sqlite:" + db.toUri() + "?readonly_shm=1" : "jdbc:sqlite:" + db);
    return ds;
  }

  /** The files of an app's SQLite or H2 database, as its connection names them; unknown in memory. */
  private static StorageSize filesOf(Dialect dialect, Connection c) throws SQLException {
    String sql = dialect == Dialect.SQLITE ? "SELECT file FROM pragma_database_list WHERE name = 'main'"
        : "SELECT DATABASE_PATH()";
    try (Statement st = c.createStatement(); var rs = st.executeQuery(sql)) {
      String file = rs.next() ? rs.getString(1) : null;
      if (file == null || file.isEmpty()) {
        return StorageSize.UNKNOWN;
      }
      return dialect == Dialect.SQLITE ? StorageSize.ofFiles(Path.of(file), Path.of(file + "-wal"))
          : StorageSize.ofFiles(Path.of(file + ".mv.db"));
    }
  }

  /** The one-row answer of {@code PRAGMA <name>}. */
  private static String pragma(Connection c, String name) throws SQLException {
    try (Statement st = c.createStatement(); var rs = st.executeQuery("PRAGMA " + name)) {
      return rs.next() ? rs.getString(1) : "no answer";
    }
  }

  /**
   * What a failed SQLite open throws, once it has released what it held: a damaged file named as
   * such ({@link StoreErrors#wrapOpen}), a native library that could not load explained, and
   * anything else as it is.
   */
  private IdempotencyException openFailure(Path db, Throwable e) {
    if (e instanceof IdempotencyException i) {
      return i;
    }
    if (e instanceof RuntimeException r) {
      throw r;
    }
    if (e instanceof SQLException s && !nativeLibraryMissing(s)) {
      return StoreErrors.wrapOpen(schema.what(), db, s);
    }
    return nativeLibraryError(e);
  }

  /**
   * sqlite-jdbc unpacks its native library into {@code java.io.tmpdir} (or {@code org.sqlite.tmpdir})
   * on first use and loads it from there; where that directory is mounted {@code noexec} or cannot
   * be written, the load fails with an {@link UnsatisfiedLinkError}, or a SQLException caused by
   * sqlite-jdbc's NativeLibraryNotFoundException, neither of which says what to do.
   */
  private static IdempotencyException nativeLibraryError(Throwable e) {
    if (e instanceof Error err && !sqliteLinkage(err)) {
      // Any other Error as it is: a class of another library missing from a hand-made class path
      // (jackson-databind, say) is not SQLite's, and the advice below would send the operator to
      // remount a directory for nothing.
      throw err;
    }
    String dir = System.getProperty("org.sqlite.tmpdir", System.getProperty("java.io.tmpdir"));
    return new JournalException("cannot load SQLite's native library, which sqlite-jdbc unpacks into " + dir
        + " and loads from there (" + e + "). If that directory is mounted noexec, start the JVM with"
        + " -Dorg.sqlite.tmpdir=<a directory the process may write and execute from>", e);
  }

  /**
   * Whether an Error is sqlite-jdbc's failure to load: an {@link UnsatisfiedLinkError}, or a class of
   * sqlite-jdbc ({@code org.sqlite}) that could not be defined or initialised, since its native
   * library did not load. A missing class of any other library is not.
   */
  private static boolean sqliteLinkage(Error e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof UnsatisfiedLinkError) {
        return true;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    if (!(e instanceof NoClassDefFoundError || e instanceof ExceptionInInitializerError)) {
      return false;
    }
    // NoClassDefFoundError names the class ("org/sqlite/core/NativeDB", "Could not initialize class
    // org.sqlite.core.NativeDB"); an initializer's failure is in a static block of its class.
    String message = String.valueOf(e.getMessage()).replace('/', '.');
    if (message.contains("org.sqlite.")) {
      return true;
    }
    Throwable cause = e instanceof ExceptionInInitializerError ? e.getCause() : null;
    if (cause != null) {
      for (StackTraceElement f : cause.getStackTrace()) {
        if (f.getMethodName().equals("<clinit>") && f.getClassName().startsWith("org.sqlite.")) {
          return true;
        }
      }
    }
    return false;
  }

  /** sqlite-jdbc reports a library it could not unpack or load as a SQLException with this cause. */
  private static boolean nativeLibraryMissing(SQLException e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c.getClass().getSimpleName().equals("NativeLibraryNotFoundException") || c instanceof UnsatisfiedLinkError) {
        return true;
      }
      if (c.getCause() == c) {
        break;
      }
    }
    return false;
  }

  private static void closeQuietly(AutoCloseable... all) {
    for (AutoCloseable c : all) {
      if (c != null) {
        try {
          c.close();
        } catch (Exception ignored) {
          // already failing; the first error is the one to report
        }
      }
    }
  }
}
