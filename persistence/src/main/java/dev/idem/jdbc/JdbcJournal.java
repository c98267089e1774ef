package dev.idem.jdbc;

import dev.idem.core.AttemptRecord;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.spi.Journal;
import dev.idem.core.JournalException;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.StaleOwnerException;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.internal.CorruptRowException;
import dev.idem.jdbc.internal.CorruptRowFound;
import dev.idem.jdbc.internal.CrashRecovery;
import dev.idem.storage.CommitUnconfirmedException;
import dev.idem.storage.FilesReplacedException;
import dev.idem.storage.LockLostException;
import dev.idem.storage.Dialect;
import dev.idem.storage.Durability;
import dev.idem.storage.Layout;
import dev.idem.jdbc.internal.Instants;
import dev.idem.storage.StoreOpener;
import dev.idem.jdbc.internal.OperationTable;
import dev.idem.jdbc.internal.OperationTable.Change;
import dev.idem.jdbc.internal.OperationTable.RowKey;
import dev.idem.jdbc.internal.Quarantine;
import dev.idem.jdbc.internal.RawRow;
import dev.idem.jdbc.internal.RecordCodec;
import dev.idem.jdbc.internal.RequestCheck;
import dev.idem.jdbc.internal.RequestMemo;
import dev.idem.jdbc.internal.SecretHeaders;
import dev.idem.storage.SqlSession;
import dev.idem.storage.SqlWork;
import dev.idem.storage.Schema;
import dev.idem.storage.Store;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A durable {@link Journal} over JDBC: embedded SQLite in a directory by default, PostgreSQL for a
 * fleet of processes sharing one database.
 *
 * <h2>Opening</h2>
 * <pre>{@code
 * JdbcJournal journal = JdbcJournal.openEmbedded(Path.of("/var/lib/myapp/idem"));   // SQLite, one process
 * JdbcJournal shared = JdbcJournal.dataSource(pooledPgDataSource).open();          // PostgreSQL fleet
 * }</pre>
 * Opening creates or migrates the schema (forward SQL migrations recorded in
 * {@code idem_schema_version}), quarantines rows with an unknown state, and settles what a dead
 * process may have left in flight (see "Crashes" below).
 *
 * <h2>The embedded journal (SQLite)</h2>
 * {@link #openEmbedded} keeps {@code idem-journal.db} (and SQLite's {@code -wal} and {@code -shm}
 * files) in a directory readable by its owner only, in WAL mode: a durable write returns once the
 * write-ahead log is synced, so what it acknowledged survives kill -9 and, as far as the disk
 * honours a flush, power loss. (SQLite commits with {@code synchronous=NORMAL}, and the journal
 * syncs the {@code -wal} file after each group commit, outside its statement lock, so that the
 * next group's statements run during the sync: the same guarantee as {@code synchronous=FULL}.) One connection writes; concurrent callers share
 * its commits (group commit: one sync covers every begin that arrived while the previous commit
 * ran). The journal belongs to one process: a second process, or a second open in the same JVM,
 * gets a {@link JournalException}. The directory is the journal: copy or move it whole, and only
 * while the journal is closed. sqlite-jdbc unpacks its native library into {@code java.io.tmpdir}
 * on first use; where that directory is mounted {@code noexec}, set {@code -Dorg.sqlite.tmpdir} to
 * one that is not (the open fails with a message that says so).
 *
 * <p>Why SQLite and not H2: killed 340 times in a row, an embedded H2 journal lost 264 of 1,605
 * acknowledged operations (91 of them already sent), and from a file state that repeated kills
 * leave behind, H2 2.5 drops a committed row even after {@code CHECKPOINT SYNC}. SQLite in the same
 * loops lost none of 100,645. {@link #dataSource} still accepts an app's H2 DataSource, for an app
 * that already runs H2 and accepts that record; it is never the default.
 *
 * <h2>Durability</h2>
 * {@link #begin} returns only when the PENDING record is durable: nothing is sent for an operation
 * whose begin did not return. Before any attempt leaves the process, the journal durably knows that
 * it may leave: {@link #claim} is durable when it returns, except the first claim of an inline
 * operation ({@link NewOperation#queued()} false), which begin's durable record already stands for
 * (it costs no sync of its own). The executor's inline call claims with its begin
 * ({@link #beginAndClaim}): one INSERT of the row already IN_FLIGHT, in the begin's commit. A queued operation's first claim is durable, so that a queued
 * operation found unclaimed after a crash is known never to have been sent. What the caller is told
 * is what the journal keeps: a {@link #transition} to FAILED or UNCERTAIN is durable when it returns,
 * so a caller told FAILED never sees the operation sent again and take effect. {@link #recordAttempt},
 * a transition to SUCCEEDED or back to PENDING, and {@link #recordOutcomeDelivered} are visible at
 * once and made durable with the next durable write or within the deferred commit interval; losing
 * them in a crash leaves the operation IN_FLIGHT or PENDING, from which it is re-sent with the same
 * key (and the server replays its answer), or leaves an outcome to be handed over once more. So a
 * SUCCEEDED outcome may reach the caller up to that interval before it is durable: a crash in
 * between resends the operation once with its key (docs/journal.md, "The rule"). A normal JVM exit
 * is not a crash: the embedded journal closes itself then ({@link Builder#closeOnShutdown}).
 * {@link #abandon}, {@link #redrive}, {@link #redriveIfUnchanged}, {@link #settleIfUnchanged} and
 * {@link #purge} are durable when they return.
 * {@link #flush()} makes everything durable now; {@link #close()} flushes.
 *
 * <h2>Crashes</h2>
 * On a journal only this process uses (embedded, or an app's SQLite or H2 DataSource), an
 * IN_FLIGHT operation found at open belongs to a dead process: unless its attempt was recorded, it
 * gets an AMBIGUOUS attempt and goes back to PENDING, due now. After a crash (the embedded journal
 * was not closed), so does an inline PENDING operation never durably claimed, whose first attempt
 * may have gone out under a claim the crash lost; a queued one never claimed was never sent, and is
 * left as it is. A later 4xx to the resend then ends it UNCERTAIN, never FAILED: the first attempt
 * may have taken effect. On PostgreSQL, leases expire; the claim that takes over an expired lease
 * records the same AMBIGUOUS attempt, and an owner that claims its own lease again (a restarted
 * instance with a stable owner name) takes it over at once.
 *
 * <p>On PostgreSQL every call takes a connection from the app's DataSource (use a pool) and commits
 * before returning; durable writes commit with {@code synchronous_commit = on}, the deferred ones
 * with {@code off}. Every transaction runs at READ COMMITTED, whatever the connection's default
 * (set for that transaction only; the claims below rely on it: docs/fleet.md, "Isolation"). Claims use {@code SELECT ... FOR UPDATE SKIP LOCKED} and a fencing generation,
 * so each pending operation is resumed by one process at a time, and a completion from a stale
 * owner updates nothing and throws {@link StaleOwnerException}. The claim of an operation an app's
 * call named ({@link #claimWaiting}: an execute of an existing operation, a resume(id)) waits up
 * to 1.5 seconds for a row another transaction has locked (most often another instance's due-page
 * read, held for milliseconds) before it reports the operation as not claimable now; a background
 * pass's claims ({@link #claim}, {@link #claimAll}: a resume pass, an outbox dispatcher) skip such
 * a row at once, so that instances never wait on each other.
 *
 * <h2>Secrets and sizes</h2>
 * Headers named in {@link RequestSnapshot#DEFAULT_SECRET_HEADERS} (and any given to
 * {@link Builder#excludeHeaders}) are stripped from request snapshots and stored responses, even if
 * the caller forgot to. A response body larger than {@link #DEFAULT_MAX_STORED_RESPONSE_BODY} bytes
 * is not stored: the stored response then has an empty body and the header
 * {@link #TRUNCATED_BODY_HEADER} with the original length. A request body larger than
 * {@link #DEFAULT_MAX_REQUEST_BODY} bytes is refused at begin (so it is never sent), with a
 * {@link JournalException} that names the limit and how to raise it
 * ({@link Builder#maxRequestBodyBytes}, up to 700 KiB). The HTTP adapters' own limit
 * ({@code maxBodyBytes}, 1 MiB by default) is separate and larger: a body between the two passes
 * the adapter and is refused here.
 *
 * <p>A page ({@link #findDue}, by owner or by identity, {@link #findByState},
 * {@link #findUndelivered}, {@link #findSummariesByState}) is bounded by its stored text as well as
 * by its size: a read stops taking rows once they hold 4 Mi characters of stored text (request,
 * response and attempts JSON; at least one row, however large), and the page ends there, short,
 * as the {@link Journal} contract allows (only an empty page is the last; the caller pages on from
 * its last record). It reads on past that only while every row it took was set aside as
 * undecodable. So a page of records with bodies near the 512 KiB limit holds about six of them
 * (about 4 MB of decoded bodies; a resume holds two pages), not 100 (about 100 MB). On SQLite the
 * rows after the cut are never copied out of the database; PostgreSQL's and H2's drivers receive
 * every row a read asked for before the first is taken, so there it bounds what is decoded and
 * held, not what the driver receives.
 *
 * <h2>Text the database cannot store</h2>
 * A scope, operation name or reference with an unpaired UTF-16 surrogate is refused at begin
 * ({@link IllegalArgumentException}, nothing sent): no Unicode encoding can store it, and both
 * drivers write it as {@code ?}, so it would read back as another tenant's text. So the journal
 * never holds an operation whose identity has one, and every other call answers such an identity,
 * scope or reference as it answers one it does not hold, without asking the database (which would
 * match the other tenant's {@code ?}): {@link #find} and {@link #findByReference} find nothing,
 * {@link #recordOutcomeDelivered} records nothing, {@link #claimAll}, {@link #redriveIfUnchanged}
 * and {@link #settleIfUnchanged} change nothing for it, and
 * {@link #claim}, {@link #recordAttempt}, {@link #transition}, {@link #recordAttemptAndTransition},
 * {@link #abandon} and {@link #redrive} throw {@link IllegalStateException} ("no such operation",
 * naming the field and position, never the text), as the in-memory journal does for an unknown
 * identity.
 *
 * <p>A scope, operation name or reference with a NUL character (U+0000) is refused at begin the
 * same way ({@link IllegalArgumentException} naming the field, nothing written or sent), on every
 * database: PostgreSQL's text types cannot store it, and a journal accepts the same identities
 * whichever database holds it, though SQLite and H2 could store one. On PostgreSQL the other calls
 * answer such an identity, scope or reference as one the journal does not hold, as above; SQLite
 * and H2 are asked, and find only what an earlier version may have stored. (The executor refuses
 * every control character there before it calls the journal; this is for the journal's own
 * callers.) The in-memory journal and {@code JournalContract} do not refuse one.
 *
 * <p>Free text never fails a write: a reason (of a transition, an abandon, a settlement) and a
 * quarantine's reason are stored with U+FFFD in place of each NUL and each unpaired UTF-16
 * surrogate, on every database, so that a reason carrying a server's bytes (a transport failure's
 * message) cannot fail the transition of an attempt already sent; the record returned holds the
 * reason as stored. A reason is also cut to 2,000 characters (a quarantine's to 500), never inside
 * a surrogate pair. A NUL or a surrogate (paired or not) inside the JSON columns (an attempt's
 * reason, request and response headers) is stored as a JSON escape, which every database stores,
 * and reads back as given.
 *
 * <h2>Bad rows and bad files</h2>
 * A row that cannot be decoded (unknown state, snapshot that is not valid JSON, a stored request
 * that no longer matches the checksum written with it) is quarantined: flagged in place with the
 * reason, logged at WARN (identity and reason, never stored values), and skipped by every query;
 * {@link #find} and {@link #begin} of that identity throw a {@link JournalException}. List them
 * with {@link #findQuarantined(int)}. An embedded database file that is damaged, truncated,
 * deleted or swapped for another journal's is refused at open with a message that names the file
 * and says what to do; it is never answered with a fresh, empty journal.
 *
 * <p>Thread-safe. Every method throws {@link JournalException} when the journal cannot be read or
 * written (locked, read-only, disk full, database down) or is closed; a failed write says whether
 * the attempt it belonged to was already sent, and which state stays durable.
 */
public final class JdbcJournal implements Journal {
  /** The default largest response body stored with a finished operation: 64 KiB. */
  public static final int DEFAULT_MAX_STORED_RESPONSE_BODY = 64 * 1024;
  /** The default largest request body journaled: 512 KiB. Larger requests are refused at begin. */
  public static final int DEFAULT_MAX_REQUEST_BODY = 512 * 1024;
  /** The default longest wait before a deferred write is committed (SQLite, H2): 100 ms. */
  public static final Duration DEFAULT_DEFERRED_COMMIT_INTERVAL = Duration.ofMillis(100);
  /**
   * The longest {@link Builder#deferredCommitInterval}: {@code Long.MAX_VALUE} nanoseconds (about
   * 292 years), the longest delay the store can schedule its background commit after.
   */
  private static final Duration MAX_DEFERRED_COMMIT_INTERVAL = Duration.ofNanos(Long.MAX_VALUE);
  /**
   * Set on a stored response whose body was too large to keep; the value is the original body
   * length in bytes, and the stored body is empty.
   */
  public static final String TRUNCATED_BODY_HEADER = "idem-journal-body-truncated";
  /** The largest stored request snapshot (headers and base64 body, as JSON): 1,000,000 characters. */
  static final int MAX_REQUEST_JSON_CHARS = 1_000_000;
  /**
   * The highest {@link Builder#maxRequestBodyBytes}: 700 KiB (716,800 bytes), so that the stored
   * JSON fits H2's text columns.
   */
  public static final int MAX_REQUEST_BODY_CEILING = 700 * 1024;
  /**
   * The longest the shutdown hook ({@link Builder#closeOnShutdown}) waits for the journal to
   * close: 5 seconds. A close normally takes one commit; one that takes longer (a disk that stopped
   * answering) must not hold the JVM's exit, and the next open then recovers as after a crash.
   */
  public static final Duration SHUTDOWN_CLOSE_TIMEOUT = Duration.ofSeconds(5);
  /** What calls made after the shutdown hook closed the journal are told. */
  static final String CLOSED_AT_EXIT = "by its JVM shutdown hook: the JVM is exiting, and nothing more is written";
  /** How many rows one transaction of {@link #purge} deletes at most: 1,000. */
  public static final int PURGE_BATCH = 1000;

  /**
   * The most the requests of running operations kept in memory take (see {@link RequestMemo}):
   * 4 MiB, whatever the number of operations.
   */
  static final long REQUEST_MEMO_BYTES = 4L * 1024 * 1024;

  private static final Logger LOG = LoggerFactory.getLogger(JdbcJournal.class);
  /** The journal's tables: migrations in this module's resources, its version table from 0.1 on. */
  private static final Schema SCHEMA = new Schema("journal", JdbcJournal.class, "dev/idem/jdbc/migrations/",
      "idem_schema_version", "idem_journal_meta", Schema.Adoption.NONE);

  private final String name;
  private final Dialect dialect;
  private final Store store;
  private final OperationTable table;
  private final RecordCodec codec;
  private final Quarantine quarantine;
  private final SecretHeaders secrets;
  private final RequestMemo requests = new RequestMemo(REQUEST_MEMO_BYTES);
  private final int maxRequestBody;
  private final int schemaVersion;
  private final StoreOpener.Opened opened;
  private final int purgeBatch;
  private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
  /** Counted down when the close that won {@link #closed} has finished, however it ended. */
  private final java.util.concurrent.CountDownLatch closeFinished = new java.util.concurrent.CountDownLatch(1);
  /** Set once a takeover was refused for a clock ahead of the database's: warned once, then logged at DEBUG. */
  private final java.util.concurrent.atomic.AtomicBoolean clockWarned = new java.util.concurrent.atomic.AtomicBoolean();
  /** The registered shutdown hook ({@link Builder#closeOnShutdown}), or null. */
  private volatile Thread shutdownHook;
  private final Duration shutdownCloseTimeout;

  private JdbcJournal(Builder b, String name, Dialect dialect, Store store, int schemaVersion,
      StoreOpener.Opened opened) {
    this.name = name;
    this.dialect = dialect;
    this.store = store;
    this.table = new OperationTable(dialect);
    this.codec = new RecordCodec(b.maxStoredResponseBody, TRUNCATED_BODY_HEADER);
    this.quarantine = new Quarantine(name, store, table, codec, b.clock, LOG);
    this.secrets = new SecretHeaders(name, b.excludedHeaders, LOG);
    this.maxRequestBody = b.maxRequestBody;
    this.schemaVersion = schemaVersion;
    this.opened = opened;
    this.purgeBatch = b.purgeBatch;
    this.shutdownCloseTimeout = b.shutdownCloseTimeout;
  }

  /**
   * Opens (creating if needed) the embedded SQLite journal in {@code directory} with the default
   * settings. The directory gets permissions {@code rwx------} and its files {@code rw-------}.
   *
   * @param directory the journal's own directory (created if missing)
   * @return the open journal; close it when the app stops (a JVM shutdown hook closes it at a normal
   *     exit if the app does not; see {@link Builder#closeOnShutdown})
   * @throws JournalException if the directory cannot be created or written, another process or
   *     another journal in this JVM has the journal open, its database file is damaged, missing or
   *     another journal's, or SQLite's native library cannot be loaded
   */
  public static JdbcJournal openEmbedded(Path directory) throws JournalException {
    return embedded(directory).open();
  }

  /**
   * Starts a builder for the embedded SQLite journal in {@code directory}.
   *
   * @param directory the journal's own directory (created if missing)
   * @return a builder; see {@link Builder} for the defaults
   */
  public static Builder embedded(Path directory) {
    return new Builder(Objects.requireNonNull(directory, "directory"), null);
  }

  /**
   * Opens the embedded journal in {@code directory} for reading only: it takes no lock, migrates,
   * recovers and quarantines nothing, and writes no byte of its files (SQLite's read-only mode);
   * every write method throws {@link JournalException}. For inspection tools, such as the journal
   * CLI; it can read while the owning app runs. Every read sees one snapshot, taken by the first:
   * a count and a listing agree, whatever the app writes meanwhile; open it again to see later
   * commits. Close it soon: while it is open the app's checkpoints cannot start its {@code -wal}
   * file over, which then grows. A read of a journal that had no {@code -wal} file at the open,
   * and that the app opens meanwhile, throws {@link JournalException} saying to read again.
   *
   * @param directory a journal directory made by {@link #openEmbedded}
   * @return the journal, read-only
   * @throws JournalException if there is no journal there, it cannot be read, or its schema
   *     version is not the one this Idem version writes
   */
  public static JdbcJournal openReadOnly(Path directory) throws JournalException {
    return openReadOnly(embedded(directory),
        (opener, finish) -> opener.openEmbeddedReadOnly(Layout.journal(directory), finish));
  }

  /**
   * Opens the journal in the database of an app's {@code dataSource} for reading only, as
   * {@link #openReadOnly(Path)} does for an embedded one: no migration, no recovery, every write
   * refused, and every read one snapshot taken by the first (a count and a listing agree, whatever
   * the app writes meanwhile); open it again to see later commits. It holds one connection of the
   * DataSource until closed; close it soon (on PostgreSQL an open snapshot holds back VACUUM). A
   * plain {@code SQLiteDataSource} on a file is not asked for a connection: the file is read as
   * {@link #openReadOnly(Path)} reads one, with no byte of it or its {@code -wal} and {@code -shm}
   * files written (a read-write connection's close, the last on the file, would fold the
   * {@code -wal} file into the database and delete it).
   *
   * @param dataSource the database of a journal opened with {@link #dataSource}; it stays the caller's
   * @return the journal, read-only
   * @throws JournalException if the database holds no journal, it cannot be read, or its schema
   *     version is not the one this Idem version writes
   */
  public static JdbcJournal openReadOnly(DataSource dataSource) throws JournalException {
    return openReadOnly(dataSource(dataSource), (opener, finish) -> opener.openDataSourceReadOnly(dataSource, finish));
  }

  /** One way of opening a store for the journal. */
  private interface Opening {
    JdbcJournal open(StoreOpener opener, StoreOpener.Finish<JdbcJournal> finish) throws IdempotencyException;
  }

  private static JdbcJournal openReadOnly(Builder b, Opening opening) throws JournalException {
    return opened(() -> opening.open(new StoreOpener(SCHEMA, true, b.deferredCommitInterval, b.clock),
        (name, dialect, store, version, opened) -> new JdbcJournal(b, name, dialect, store, version, opened)));
  }

  /** An open that fails says so with a {@link JournalException}, whatever failed. */
  private static JdbcJournal opened(Opened open) throws JournalException {
    try {
      return open.open();
    } catch (JournalException e) {
      throw e;
    } catch (IdempotencyException e) {
      throw new JournalException(e.getMessage(), e);
    }
  }

  private interface Opened {
    JdbcJournal open() throws IdempotencyException;
  }


  /**
   * Starts a builder for a journal in the database of {@code dataSource}: PostgreSQL (a connection
   * per call, so give it a pool), SQLite or H2 (one connection held for the journal's life; H2 adds
   * one for disk syncs with {@code CHECKPOINT SYNC} unless {@code syncToDisk} is off). The
   * DataSource stays the app's: {@link #close()} does not close it.
   *
   * <p>A SQLite file holds one open journal at a time, as an embedded journal's directory does: the
   * open locks {@code <file>.idem-journal.lock} beside the database until {@link #close()}, and a
   * second open (another process, or another instance in this JVM; through a DataSource, or an
   * embedded journal whose {@code idem-journal.db} this is, which takes the same lock) is refused
   * with a {@link JournalException}. Its recovery would otherwise take the live journal's in-flight
   * operations for a dead process's, and send them again.
   *
   * <p>H2 is accepted for apps that already run it, and is not recommended for the journal: in our
   * measurements H2 2.5 lost committed rows under repeated kills (see the class documentation).
   *
   * @param dataSource the app's DataSource
   * @return a builder; see {@link Builder} for the defaults
   */
  public static Builder dataSource(DataSource dataSource) {
    return new Builder(null, Objects.requireNonNull(dataSource, "dataSource"));
  }

  /**
   * The schema version of the journal's database after opening.
   *
   * @return the version the database was migrated to (or found at, when opened read-only)
   */
  public int schemaVersion() {
    return schemaVersion;
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException if the operation's scope, name or reference holds an unpaired
   *     UTF-16 surrogate, which no Unicode encoding can store, or a NUL character, which PostgreSQL
   *     cannot (refused on every database); nothing was written or sent
   */
  @Override
  public BeginResult begin(NewOperation operation) throws IdempotencyException {
    return begin(operation, null, null);
  }

  /**
   * {@inheritDoc}
   *
   * <p>One INSERT of the row already IN_FLIGHT under {@code owner} at generation 1, in the begin's
   * durable commit: the claim costs no statement of its own. After a crash the row is IN_FLIGHT,
   * and recovery owes it an ambiguous attempt, as for any claim whose attempt was not recorded.
   *
   * @throws IllegalArgumentException if the operation is queued, {@code leaseFor} is not positive, or
   *     the operation's scope, name or reference holds an unpaired UTF-16 surrogate or a NUL character;
   *     nothing was written or sent
   */
  @Override
  public BeginResult beginAndClaim(NewOperation operation, String owner, Duration leaseFor)
      throws IdempotencyException {
    Objects.requireNonNull(owner, "owner");
    if (operation.queued()) {
      throw new IllegalArgumentException("a queued operation is claimed when it is delivered, not at its begin");
    }
    if (leaseFor.isNegative() || leaseFor.isZero()) {
      throw new IllegalArgumentException("leaseFor must be positive: " + leaseFor);
    }
    return begin(operation, owner, operation.createdAt().plus(leaseFor));
  }

  /** A size as "614400 bytes (600 KiB)": the exact count, and one a reader compares with a limit at a glance. */
  private static String bytes(long n) {
    if (n < 1024) {
      return n + " bytes";
    }
    return n + " bytes (" + (n % 1024 == 0 ? Long.toString(n / 1024) : String.format(Locale.ROOT, "%.1f", n / 1024.0))
        + " KiB)";
  }

  /** @param owner claims the row it inserts under this owner, until {@code leaseExpiresAt}; null: PENDING */
  private BeginResult begin(NewOperation operation, String owner, Instant leaseExpiresAt) throws IdempotencyException {
    Objects.requireNonNull(operation, "operation");
    OperationId id = operation.id();
    requireWellFormed("scope", id.scope());
    requireWellFormed("operation name", id.operation());
    if (operation.reference() != null) {
      requireWellFormed("reference", operation.reference());
    }
    RequestSnapshot request = secrets.strip(operation.request(), id);
    if (request.bodyLength() > maxRequestBody) {
      // Often the first the app hears of this limit: an HTTP adapter accepts larger bodies (1 MiB
      // by default), and openEmbedded, the quickstarts' open, takes no options.
      throw new JournalException("cannot journal " + id + ": its request body has " + bytes(request.bodyLength())
          + ", more than the journal's limit of " + bytes(maxRequestBody) + "; nothing was sent. Raise the limit,"
          + " up to " + bytes(MAX_REQUEST_BODY_CEILING) + ", where the journal is opened:"
          + " JdbcJournal.embedded(dir).maxRequestBodyBytes(n).open() or"
          + " JdbcJournal.dataSource(ds).maxRequestBodyBytes(n).open(). An HTTP client's maxBodyBytes is a"
          + " separate limit, checked before this one", null);
    }
    NewOperation stored = request == operation.request() ? operation
        : new NewOperation(id, operation.reference(), operation.fingerprint(), request, operation.createdAt(),
            operation.queued());
    String requestJson = codec.encodeRequest(request);
    if (requestJson.length() > MAX_REQUEST_JSON_CHARS) {
      // Headers are not capped by maxRequestBodyBytes; a snapshot this large is refused rather than
      // stored in a row every later read would have to load whole.
      throw new JournalException("cannot journal " + id + ": its request_json would hold " + requestJson.length()
          + " characters, more than the journal's limit of " + MAX_REQUEST_JSON_CHARS + " (are its headers huge?);"
          + " nothing was sent", null);
    }
    OperationTable.NewRow row = new OperationTable.NewRow(id, operation.reference(), operation.fingerprint().hex(),
        requestJson, RequestCheck.of(operation.fingerprint().hex(), requestJson),
        Instants.toNanos(operation.createdAt()), operation.queued(), owner,
        owner == null ? 0 : Instants.toNanos(leaseExpiresAt));
    RawRow existing;
    try {
      // null: an unconfirmed commit reaches the catch as it is, and is explained there.
      existing = explained(id, NOT_BEGUN, null, () -> insertOrFind(id, row));
    } catch (FilesReplacedException e) {
      // Committed, into files the next open will not read: writing it again cannot help (the store
      // is unusable now), and "the database did not confirm the commit" would not be the reason.
      throw new CommitUnconfirmedException(e.getMessage() + " [" + id + ": " + BEGUN_IN_LOST_FILES + "]", e);
    } catch (LockLostException e) {
      // Committed, but the lock file went: another process may own the journal. As above, the store
      // is unusable, and the database did confirm the commit.
      throw new CommitUnconfirmedException(e.getMessage() + " [" + id + ": " + BEGUN_WITHOUT_LOCK + "]", e);
    } catch (CommitUnconfirmedException e) {
      existing = afterUnconfirmedBegin(id, row, e);
    }
    if (existing == null) {
      // Nothing goes into the request memo here: the executor ends each attempt of this call with
      // recordAttemptAndTransition, which reads no row, so an entry would only cost every caller a
      // turn on the memo's one monitor twice per call (the only Java monitor 32 callers contended).
      // A later transition() of this operation, rare, reads and checks the stored request instead.
      OperationRecord created = OperationRecord.pending(stored);
      if (owner == null) {
        return new BeginResult(created, true);
      }
      return new BeginResult(created.with(OperationState.IN_FLIGHT, owner, 1, leaseExpiresAt, null,
          operation.createdAt(), null, null), true, new Lease(owner, 1, leaseExpiresAt, false));
    }
    OperationRecord r = quarantine.decodeOrQuarantine(existing);
    if (!r.fingerprint().equals(operation.fingerprint())) {
      throw new IdempotencyKeyReusedException(id, false, "key " + id.key() + " is already journaled for "
          + id.scope() + "/" + id.operation() + " with another request fingerprint; refusing to send");
    }
    return new BeginResult(r, false);
  }

  /** The begin's one write: inserts the row unless its identity exists; null if it inserted it, else the row found. */
  private RawRow insertOrFind(OperationId id, OperationTable.NewRow row) throws IdempotencyException {
    return store.write(Durability.SYNC, id,
        SqlWork.singleStatement(c -> table.insertIfAbsent(c, row) ? null : table.select(c, id, null)));
  }

  /**
   * After a begin whose commit was not confirmed ({@link CommitUnconfirmedException}: the
   * connection dropped while the database answered the COMMIT, say): its row may be durable, and
   * then a resume, here or on another instance, would send it. So the begin's write is made again,
   * on a fresh connection, rather than the row read: a plain read cannot tell "absent" from "being
   * committed right now" (PostgreSQL may still be carrying out the COMMIT the client gave up on:
   * a slow synchronous standby or WAL flush), whereas PostgreSQL makes the insert wait on the
   * in-doubt insert's unique-index entry until that transaction ends. Then:
   *
   * <ul>
   *   <li>it inserts the row: the first write did not take effect, and this one did; the begin
   *       created the operation, as if nothing had failed;</li>
   *   <li>it finds the row exactly as this begin wrote it ({@link #writtenBy}): the first write
   *       took effect, nobody has touched it since, and nothing can have been sent under its claim;
   *       the begin created the operation, and holds the claim it made;</li>
   *   <li>it finds any other row: an existing operation, as for any begin that finds one (if it is
   *       IN_FLIGHT under this owner's claim, the caller takes that claim over and counts an
   *       ambiguous attempt: more than is known, never less);</li>
   *   <li>it fails (SQLite and H2: the store is unusable after a failed commit until it is reopened;
   *       PostgreSQL still unreachable): the caller is told that the operation MAY have been
   *       journaled and to retry with the same key, never "nothing was sent".</li>
   * </ul>
   *
   * @return null if this begin's write is the row, else the row found, which the begin returns as
   *     an existing operation
   * @throws JournalException if the write cannot be made again (the operation may be journaled)
   */
  private RawRow afterUnconfirmedBegin(OperationId id, OperationTable.NewRow row,
      CommitUnconfirmedException unconfirmed) throws IdempotencyException {
    RawRow found;
    try {
      found = insertOrFind(id, row);
    } catch (IdempotencyException | RuntimeException again) {
      unconfirmed.addSuppressed(again);
      throw new JournalException(unconfirmed.getMessage() + " [" + id + ": " + MAY_BE_BEGUN + "; writing it again"
          + " failed too: " + again.getMessage() + "]", unconfirmed);
    }
    if (found == null) {
      LOG.warn("Idem journal: the commit of the begin of {} was not confirmed ({}); it was not carried out, and the"
          + " begin was made again", id, unconfirmed.getMessage());
      return null;
    }
    if (writtenBy(found, row)) {
      LOG.warn("Idem journal: the commit of the begin of {} was not confirmed ({}), but it was carried out; going on"
          + " with the operation this call created", id, unconfirmed.getMessage());
      return null;
    }
    LOG.warn("Idem journal: the commit of the begin of {} was not confirmed ({}), and the journal holds the operation"
        + " as another call left it; going on with it as an existing operation", id, unconfirmed.getMessage());
    return found;
  }

  /**
   * Whether {@code found} is the row {@code row}'s begin inserted, untouched since: its state,
   * claim (owner, generation 1, lease expiry; or PENDING and unclaimed), creation and update time,
   * fingerprint and request, and no attempt. Any later write changes the generation, the update
   * time or the attempts. Another begin of the same key that wrote the very same row (same
   * fingerprint and owner, at the same instant) would match too: within one executor such calls
   * share one begin (single flight), and owners are distinct across instances.
   */
  private static boolean writtenBy(RawRow found, OperationTable.NewRow row) {
    boolean claimed = row.owner() != null;
    return found.state().equals(claimed ? "IN_FLIGHT" : "PENDING")
        && Objects.equals(found.owner(), row.owner())
        && found.generation() == (claimed ? 1 : 0)
        && Objects.equals(found.leaseExpiresAt(), claimed ? Long.valueOf(row.leaseExpiresAt()) : null)
        && found.createdAt() == row.createdAt()
        && found.updatedAt() == row.createdAt()
        && found.nextAttemptAt() == null
        && found.quarantinedAt() == null
        && found.queued() == row.queued()
        && "[]".equals(found.attemptsJson() == null ? null : found.attemptsJson().strip())
        && row.fingerprint().equals(found.fingerprint())
        && Objects.equals(row.requestCheck(), found.requestCheck());
  }

  /** A begin that failed before any durable record: the executor's promise, and why it holds. */
  private static final String NOT_BEGUN = "nothing was sent: an operation with no durable record is never sent";

  /** A begin whose record may be durable: what it means for the caller. */
  private static final String MAY_BE_BEGUN = "the operation MAY have been journaled (the database did not"
      + " confirm the commit): if it was, a resume sends it with this key; nothing was sent by this call."
      + " Retry with the same key, which finds it if it is there, never with a new one";

  /** A begin committed into files that were removed or replaced under the journal: what it means for the caller. */
  private static final String BEGUN_IN_LOST_FILES = "the operation MAY have been journaled, but it is NOT durable:"
      + " its commit went to the removed or replaced files, and a reopen finds it only if those files are put back"
      + " (then a resume sends it with this key); nothing was sent by this call. Retry with the same key, never with"
      + " a new one";

  /** A begin committed after the journal's lock file was removed: what it means for the caller. */
  private static final String BEGUN_WITHOUT_LOCK = "the operation MAY have been journaled: its commit is in the"
      + " journal's file, which another process may own now (a resume there would send it with this key);"
      + " nothing was sent by this call. Retry with the same key, never with a new one";

  @Override
  public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    if (!holdable(id)) {
      return Optional.empty();
    }
    RawRow row = store.read(id, c -> table.select(c, id, null));
    return row == null ? Optional.empty() : Optional.of(quarantine.decodeOrQuarantine(row));
  }

  @Override
  public List<OperationRecord> findByReference(String scope, String reference) throws IdempotencyException {
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(reference, "reference");
    if (unaskableAt(scope) >= 0 || unaskableAt(reference) >= 0) {
      return List.of(); // begin refuses such text, so no operation has it (see unaskableAt)
    }
    return quarantine.decodeAll(store.read(null, c -> table.byReference(c, scope, reference)));
  }

  /**
   * {@inheritDoc}
   *
   * <p>On PostgreSQL, a claimant whose clock ({@code now}) is more than 5 seconds ahead of the
   * database's takes over another owner's lease only once that lease has run out by the database's
   * clock too (read with one query, only for such a takeover); see docs/fleet.md, "Clocks".
   *
   * <p>On PostgreSQL, a row another transaction has locked (another instance claiming or updating
   * it, or only reading its due page) is skipped at once: empty. {@link #claimWaiting} waits for it.
   */
  @Override
  public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    return claim(id, owner, now, leaseFor, false, null);
  }

  /**
   * {@inheritDoc}
   *
   * <p>On PostgreSQL, a row another transaction has locked is waited for, up to 1.5 seconds (a
   * {@code lock_timeout} set for this claim's transaction only, or the connection's
   * {@code statement_timeout} if shorter), before the claim returns empty. On SQLite and H2 this is
   * {@link #claim}: one connection serializes every unit, so no row is ever found locked.
   */
  @Override
  public Optional<Lease> claimWaiting(OperationId id, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    return claim(id, owner, now, leaseFor, true, null);
  }

  /**
   * @param waitForRowLock on PostgreSQL, whether a row another transaction has locked is waited for
   *     (up to {@link #CLAIM_ROW_LOCK_WAIT}: {@link #claimWaiting}, the claim of an operation an app's
   *     call named) or skipped at once ({@link #claim}: a background pass's, whose rows other
   *     instances read and claim too)
   */
  private Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor,
      boolean waitForRowLock, OperationRecord asRead) throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(owner, "owner");
    if (leaseFor.isNegative() || leaseFor.isZero()) {
      throw new IllegalArgumentException("leaseFor must be positive: " + leaseFor);
    }
    requireHoldable(id);
    long nowNanos = Instants.toNanos(now);
    Instant expiresAt = now.plus(leaseFor);
    long expiresNanos = Instants.toNanos(expiresAt);
    // Durable before the attempt leaves, except the first claim of an inline operation: begin's
    // durable record already stands for it (CrashRecovery treats an inline row never claimed found
    // after a crash as maybe sent). A queued operation's first claim is durable too, so that a
    // queued row never claimed is known never to have been sent: it may wait long before its
    // dispatch, and a crash in between must not count it as an ambiguous attempt.
    return explained(id, "nothing was sent for this attempt; the operation keeps its last durable state and"
        + " its key", CLAIM_IF_UNCONFIRMED,
        () -> quarantine.quarantining(() -> store.writeDeciding(id, SqlWork.singleStatement(c -> {
      // One statement at most changes the row (the first UPDATE, or the fenced claim after reads),
      // and nothing throws after a change: the store needs no savepoint around it.
      if (table.claimFirstInline(c, id, owner, expiresNanos, nowNanos)) {
        // The executor's claim right after its begin: one UPDATE, nothing read; deferred (below).
        return new Claimed(Optional.of(new Lease(owner, 1, expiresAt, false)), false);
      }
      RawRow r = table.selectForClaim(c, id);
      if (r == null) {
        if (!table.exists(c, id)) {
          throw new IllegalStateException("no such operation: " + id);
        }
        // Locked by another transaction: another instance's claim or update, or only its due-page
        // read (findDue, FOR UPDATE SKIP LOCKED), which holds the lock for milliseconds and claims
        // nothing. The claim of an operation the app's call named waits for it, briefly; others skip it.
        r = waitForRowLock ? table.selectForClaimWaiting(c, id, CLAIM_ROW_LOCK_WAIT) : null;
        if (r == null) {
          LOG.debug("Idem journal {}: {} not claimed: another process is claiming or updating it right now",
              name, id);
          return Claimed.NONE;
        }
      }
      Quarantine.failIfQuarantined(r);
      OperationState state = Quarantine.state(r);
      if (asRead != null && (state != asRead.state() || r.generation() != asRead.generation())) {
        return Claimed.NONE; // changed since it was read (claimAll): the caller looks at it again
      }
      boolean leased = state == OperationState.IN_FLIGHT && r.leaseExpiresAt() != null
          && r.leaseExpiresAt() > nowNanos;
      // An expired lease, or the claimant's own (a restarted instance under a stable owner name).
      boolean ownLease = leased && owner.equals(r.owner());
      if (!(state == OperationState.PENDING || (state == OperationState.IN_FLIGHT && (!leased || ownLease)))) {
        return Claimed.NONE;
      }
      if (state == OperationState.IN_FLIGHT && !leased && r.leaseExpiresAt() != null && !owner.equals(r.owner())
          && aheadOfTheDatabase(c, id, r.leaseExpiresAt(), nowNanos)) {
        return Claimed.NONE; // another owner's lease, live by the database's clock
      }
      OperationState.checkTransition(state, OperationState.IN_FLIGHT);
      long generation = r.generation() + 1;
      // A takeover is reported, not acted on: the executor records what the holder may have sent.
      if (!table.claim(c, id, r.state(), r.generation(), owner, generation, expiresNanos, nowNanos)) {
        return Claimed.NONE;
      }
      return new Claimed(Optional.of(new Lease(owner, generation, expiresAt, state == OperationState.IN_FLIGHT)),
          generation > 1 || r.queued());
    }), claimed -> claimed.durable() ? Durability.SYNC : Durability.DEFERRED))).lease();
  }

  /**
   * {@inheritDoc} Fenced: the row is claimed only if it is still at {@code asRead}'s state and
   * generation (on PostgreSQL a row another transaction holds is skipped, as {@link #claim} does).
   */
  @Override
  public Optional<Lease> claimIfUnchanged(OperationRecord asRead, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    return claim(Objects.requireNonNull(asRead, "asRead").id(), owner, now, leaseFor, false, asRead);
  }

  /**
   * {@inheritDoc}
   *
   * <p>On one connection (the embedded journal, an app's SQLite or H2 DataSource): one unit of
   * work, all claimed or none, made durable by one commit (one disk sync for the batch), with one
   * fenced UPDATE per operation and nothing read: an operation is claimed only if its row is still
   * at the state and generation it was read at, so that its lease and owner are as read too. On
   * PostgreSQL, {@link Journal#claimAll}'s default: one {@link #claimIfUnchanged} at a time, each
   * skipping a row another transaction has locked.
   */
  @Override
  public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    Objects.requireNonNull(asRead, "asRead");
    Objects.requireNonNull(owner, "owner");
    if (leaseFor.isNegative() || leaseFor.isZero()) {
      throw new IllegalArgumentException("leaseFor must be positive: " + leaseFor);
    }
    if (asRead.isEmpty()) {
      return List.of();
    }
    if (!dialect.lockForClaim().isEmpty()) {
      // An UPDATE on PostgreSQL would wait for a row another node is claiming, which a claim must
      // skip: the default, one claimIfUnchanged at a time (another instance may have sent one since
      // and journaled it PENDING until its backoff or Retry-After).
      return Journal.super.claimAll(asRead, owner, now, leaseFor);
    }
    long nowNanos = Instants.toNanos(now);
    Instant expiresAt = now.plus(leaseFor);
    long expiresNanos = Instants.toNanos(expiresAt);
    // The unit is named after none of its rows, nor after every row (null): then every later unit,
    // on whichever row, would wait for this commit, and the lanes' deferred writes with it. Only
    // this caller must wait for it (nothing is sent under a claim before it is durable); a reader
    // of one of these rows may meanwhile see a claim a crash undoes, as it may see an inline
    // operation's deferred first claim, and cannot send under it (it is not its lease).
    Object batch = new Object();
    return store.writeDeciding(batch, c -> {
      List<Optional<Lease>> leases = new ArrayList<>(asRead.size());
      for (OperationRecord r : asRead) {
        OperationState state = r.state();
        boolean leased = state == OperationState.IN_FLIGHT && r.leaseExpiresAt() != null
            && Instants.toNanos(r.leaseExpiresAt()) > nowNanos;
        // Claimable as claim() decides, from the row as read: the fence below makes sure it still is.
        boolean claimable = state == OperationState.PENDING
            || (state == OperationState.IN_FLIGHT && (!leased || owner.equals(r.owner())));
        long generation = r.generation() + 1;
        // Not holdable: a record made up by the caller, whose identity the database would read as another's.
        leases.add(claimable && holdable(r.id())
            && table.claim(c, r.id(), state.name(), r.generation(), owner, generation, expiresNanos, nowNanos)
            ? Optional.of(new Lease(owner, generation, expiresAt, state == OperationState.IN_FLIGHT))
            : Optional.empty());
      }
      return leases;
    }, leases -> leases.stream().anyMatch(Optional::isPresent) ? Durability.SYNC : Durability.DEFERRED);
  }

  /**
   * The check before a PostgreSQL takeover of another owner's lease, which was written with the
   * holder's clock and has run out by the claimant's ({@code nowNanos}): true (refuse) if the
   * claimant's clock is ahead of the database's by more than {@link #MAX_CLOCK_AHEAD} and the lease
   * has not run out by the database's clock. An instance whose clock runs ahead (a VM after a
   * suspend, a host whose NTP is broken) would otherwise take over every live lease early and send
   * beside its holder. The database's clock stands for the holder's here: keeping the instances'
   * clocks in step with it (NTP) is the deployment's part (docs/fleet.md, "Clocks"). Leases stay
   * written and compared with the instances' clocks, as the journal SPI's {@code now} says; the
   * database's clock is read only for a takeover, one query, so a claimant that is on time loses
   * nothing, and one that is ahead waits as long as one on time would. SQLite and H2: one process,
   * one clock, no check.
   */
  private boolean aheadOfTheDatabase(SqlSession c, OperationId id, long leaseExpiresAt, long nowNanos)
      throws SQLException {
    if (dialect != Dialect.POSTGRESQL) {
      return false;
    }
    long databaseNow = table.databaseNanos(c);
    long ahead = nowNanos - databaseNow;
    if (ahead <= MAX_CLOCK_AHEAD.toNanos() || leaseExpiresAt <= databaseNow) {
      return false;
    }
    if (clockWarned.compareAndSet(false, true)) {
      LOG.warn("Idem journal {}: this instance's clock is {} ahead of the database's, more than the {} a lease"
          + " tolerates: it takes over no other owner's lease before that lease runs out by the database's clock"
          + " (first: {}). Synchronise this host's clock (NTP)", name, Duration.ofNanos(ahead), MAX_CLOCK_AHEAD, id);
    } else {
      LOG.debug("Idem journal {}: clock {} ahead of the database's; no takeover of {}", name,
          Duration.ofNanos(ahead), id);
    }
    return true;
  }

  /**
   * PostgreSQL: how long the claim of an operation an app's call named ({@link #claimWaiting}: an
   * execute of an existing operation, a resume(id) of one) waits for another transaction's lock on
   * the row before it reports the operation as not claimable now: 1.5 seconds, set for the claim's
   * own transaction only ({@code lock_timeout}, {@code SET LOCAL}). The lock it meets is most often
   * another instance's due-page read, which lasts milliseconds; a claim or update by another
   * instance commits as quickly. A background pass's claims ({@link #claim}, {@link #claimAll}) do
   * not wait.
   */
  static final Duration CLAIM_ROW_LOCK_WAIT = Duration.ofMillis(1500);

  /**
   * How far a claimant's clock may run ahead of PostgreSQL's before a takeover is checked against
   * the database's clock instead (see {@link #aheadOfTheDatabase}): 5 seconds, far beyond what NTP
   * leaves (milliseconds), and small beside any lease. Within it, a takeover can come that much
   * before the lease runs out by the holder's clock.
   */
  static final Duration MAX_CLOCK_AHEAD = Duration.ofSeconds(5);

  /**
   * What a claim did: the lease, if it got one, and whether it must be durable before it returns.
   */
  private record Claimed(Optional<Lease> lease, boolean durable) {
    static final Claimed NONE = new Claimed(Optional.empty(), false);
  }

  @Override
  public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(lease, "lease");
    Objects.requireNonNull(attempt, "attempt");
    requireHoldable(id);
    long at = Instants.toNanos(attempt.endedAt());
    explained(id, SENT_ALREADY, SENT_ALREADY_IF_UNCONFIRMED, () -> quarantine.quarantining(() -> store.write(
        Durability.DEFERRED, id, c -> {
      RawRow r = existing(table.selectAttemptsForUpdate(c, id), id);
      fence(r, id, lease);
      String attempts;
      try {
        attempts = codec.appendAttempt(r.attemptsJson(), attempt);
      } catch (CorruptRowException e) {
        throw new CorruptRowFound(r, e);
      }
      if (!table.updateAttempts(c, id, lease.owner(), lease.generation(), attempts, at)) {
        throw new StaleOwnerException(id, lease, "changed concurrently");
      }
      return null;
    })));
  }

  @Override
  public OperationRecord transition(OperationId id, Lease lease, Transition t) throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(lease, "lease");
    Objects.requireNonNull(t, "transition");
    requireHoldable(id);
    String responseJson = codec.encodeResponse(t.response(), secrets.forResponses());
    Change change = new Change(t.target(), nanosOrNull(t.nextAttemptAt()), Instants.toNanos(t.at()), responseJson,
        OperationTable.storedReason(t.reason()));
    // The response as stored (secret headers stripped, a large body replaced by its marker), decoded
    // here rather than on the writer connection's turn.
    ResponseSnapshot storedResponse = storedForm(responseJson);
    // FAILED and UNCERTAIN end the caller's call with an exception it acts on (gives up, alerts,
    // refunds): a crash must not turn them back into an operation that is resent and may take
    // effect, so they are durable before the caller is told. They are rare. SUCCEEDED and a retry's
    // PENDING may be deferred: losing them leaves the row IN_FLIGHT, resent with the same key, and
    // the server replays its answer (see "Durability").
    Durability durability = t.target() == OperationState.FAILED || t.target() == OperationState.UNCERTAIN
        ? Durability.SYNC : Durability.DEFERRED;
    OperationRecord done = explained(id, SENT_ALREADY, SENT_ALREADY_IF_UNCONFIRMED,
        () -> quarantine.quarantining(() -> store.write(durability, id, c -> {
      // The request of an operation begun here is known: read the row without it, and parse no JSON
      // request on the writer connection's turn (the largest part of a durable call's CPU).
      RawRow raw = existing(table.selectWithoutRequest(c, id), id);
      RequestSnapshot known = requests.get(id, raw.requestCheck());
      OperationRecord r;
      if (known != null) {
        r = quarantine.decode(raw, known);
      } else {
        raw = existing(table.select(c, id, null), id);
        r = quarantine.decode(raw);
      }
      fence(raw, id, lease);
      OperationState.checkTransition(r.state(), t.target());
      if (!table.transitionFenced(c, id, lease.owner(), lease.generation(), change)) {
        throw new StaleOwnerException(id, lease, "changed concurrently");
      }
      return r.with(t.target(), r.owner(), r.generation(), null, t.nextAttemptAt(), t.at(), storedResponse,
          change.reason());
    })));
    if (done.state().isTerminal()) {
      requests.remove(id);
    }
    return done;
  }

  /**
   * One fenced UPDATE that appends the attempt and moves the row, reading nothing: the executor
   * knows the row it holds, so neither the request, the attempts nor the stored response is read
   * back or parsed. Durable as {@link #transition} is (FAILED and UNCERTAIN when it returns). Only
   * when the fence does not match is the row read, to say why.
   */
  @Override
  public void recordAttemptAndTransition(OperationId id, Lease lease, AttemptRecord attempt, Transition t)
      throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(lease, "lease");
    Objects.requireNonNull(attempt, "attempt");
    Objects.requireNonNull(t, "transition");
    requireHoldable(id);
    // The row is IN_FLIGHT under this lease (the UPDATE's fence says so): the same check as
    // transition's, made before anything is written.
    OperationState.checkTransition(OperationState.IN_FLIGHT, t.target());
    String responseJson = codec.encodeResponse(t.response(), secrets.forResponses());
    Change change = new Change(t.target(), nanosOrNull(t.nextAttemptAt()), Instants.toNanos(t.at()), responseJson,
        OperationTable.storedReason(t.reason()));
    String attemptJson = codec.encodeAttempt(attempt);
    Durability durability = t.target() == OperationState.FAILED || t.target() == OperationState.UNCERTAIN
        ? Durability.SYNC : Durability.DEFERRED;
    explained(id, SENT_ALREADY, SENT_ALREADY_IF_UNCONFIRMED, () -> quarantine.quarantining(() -> store.write(durability,
        id, SqlWork.singleStatement(c -> {
      if (!table.appendAttemptAndTransition(c, id, lease.owner(), lease.generation(), attemptJson, change)) {
        RawRow r = existing(table.selectAttemptsForUpdate(c, id), id);
        fence(r, id, lease);
        throw new StaleOwnerException(id, lease, "changed concurrently");
      }
      return null;
    }))));
    if (t.target().isTerminal()) {
      requests.remove(id);
    }
  }

  @Override
  public OperationRecord abandon(OperationId id, Transition t) throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(t, "transition");
    requireHoldable(id);
    String responseJson = codec.encodeResponse(t.response(), secrets.forResponses());
    Change change = new Change(t.target(), nanosOrNull(t.nextAttemptAt()), Instants.toNanos(t.at()), responseJson,
        OperationTable.storedReason(t.reason()));
    return quarantine.quarantining(() -> store.write(Durability.SYNC, id, c -> {
      RawRow raw = existing(table.selectForUpdate(c, id), id);
      Quarantine.failIfQuarantined(raw);
      OperationRecord r = quarantine.decode(raw);
      OperationState.checkAbandon(r.state(), t.target());
      if (!table.transitionUnheld(c, id, raw.state(), raw.generation(), change)) {
        throw new IllegalStateException("operation " + id + " changed while it was being abandoned; try again");
      }
      return r.with(t.target(), r.owner(), r.generation(), null, t.nextAttemptAt(), t.at(),
          quarantine.decodeResponse(raw, responseJson), change.reason());
    }));
  }

  @Override
  public OperationRecord redrive(OperationId id, Instant now) throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    requireHoldable(id);
    long nowNanos = Instants.toNanos(now);
    return quarantine.quarantining(() -> store.write(Durability.SYNC, id, c -> {
      RawRow raw = existing(table.selectForUpdate(c, id), id);
      Quarantine.failIfQuarantined(raw);
      OperationRecord r = quarantine.decode(raw);
      OperationState.checkRedrive(r.state());
      String reason = "re-driven from " + r.state();
      if (!table.redriveUnheld(c, id, raw.state(), raw.generation(),
          new Change(OperationState.PENDING, null, nowNanos, null, reason), restartsAge(r))) {
        throw new IllegalStateException("operation " + id + " changed while it was being re-driven; try again");
      }
      return redriven(r, now, reason);
    }));
  }

  /**
   * {@code r} as a re-drive at {@code now} leaves it: {@code created_at} moved to {@code now} if
   * {@code restartsAge} (see {@link #restartsAge}), else kept.
   */
  private static OperationRecord redriven(OperationRecord r, Instant now, String reason) {
    return new OperationRecord(r.id(), r.reference(), r.fingerprint(), r.request(), OperationState.PENDING,
        r.owner(), r.generation(), null, null, restartsAge(r) ? now : r.createdAt(), now, r.attempts(), null, reason,
        r.queued(), null);
  }

  /**
   * Whether a re-drive of {@code r} moves its {@code created_at}, from which queued delivery's age
   * limit counts, to the re-drive: only if no attempt may have reached the server (see
   * {@link Journal#redrive}). Decided here, on the row read under its lock: its attempts cannot
   * change before the UPDATE, which is fenced by the state and generation read (attempts are only
   * added under a claim, which moves the generation).
   */
  private static boolean restartsAge(OperationRecord r) {
    return r.attempts().stream().noneMatch(AttemptRecord::mayHaveReachedServer);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Atomic: one unit of work reads the row under its lock and re-drives it with an UPDATE whose
   * WHERE names the state and generation read, so two instances that re-drive the same operation
   * as they listed it (two reconciliation passes) cannot both succeed. Durable when it returns.
   * Quarantined: throws a {@link JournalException}, as {@link #redrive} does.
   */
  @Override
  public Optional<OperationRecord> redriveIfUnchanged(OperationRecord asRead, Instant now)
      throws IdempotencyException {
    Objects.requireNonNull(asRead, "asRead");
    OperationState.checkRedrive(asRead.state());
    OperationId id = asRead.id();
    long nowNanos = Instants.toNanos(now);
    if (!holdable(id)) {
      return Optional.empty(); // never held (see "Text the database cannot store")
    }
    String reason = "re-driven from " + asRead.state();
    return quarantine.quarantining(() -> store.write(Durability.SYNC, id, c -> {
      RawRow raw = table.selectForUpdate(c, id);
      if (raw == null) {
        return Optional.<OperationRecord>empty();
      }
      Quarantine.failIfQuarantined(raw);
      OperationRecord r = quarantine.decode(raw);
      if (r.state() != asRead.state() || r.generation() != asRead.generation()
          || !table.redriveUnheld(c, id, raw.state(), raw.generation(),
              new Change(OperationState.PENDING, null, nowNanos, null, reason), restartsAge(r))) {
        return Optional.<OperationRecord>empty();
      }
      return Optional.of(redriven(r, now, reason));
    }));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Atomic: one unit of work reads the row under its lock and settles it with one UPDATE whose
   * WHERE names UNCERTAIN and the generation read, writing the state, response (with its checksum),
   * reason, owner and generation at once, so no other instance ever reads it PENDING or IN_FLIGHT on
   * the way, and a crash leaves it either UNCERTAIN as read or settled. Durable when it returns.
   * {@code leaseFor} is not used. Quarantined: throws a {@link JournalException}, as
   * {@link #redriveIfUnchanged} does.
   */
  @Override
  public Optional<OperationRecord> settleIfUnchanged(OperationRecord asRead, String owner, Duration leaseFor,
      Transition settlement) throws IdempotencyException {
    Objects.requireNonNull(asRead, "asRead");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(leaseFor, "leaseFor");
    Objects.requireNonNull(settlement, "settlement");
    OperationState.checkSettle(asRead.state(), settlement.target());
    OperationId id = asRead.id();
    if (!holdable(id)) {
      return Optional.empty(); // never held (see "Text the database cannot store")
    }
    String responseJson = codec.encodeResponse(settlement.response(), secrets.forResponses());
    Change change = new Change(settlement.target(), null, Instants.toNanos(settlement.at()), responseJson,
        OperationTable.storedReason(settlement.reason()));
    return quarantine.quarantining(() -> store.write(Durability.SYNC, id, c -> {
      RawRow raw = table.selectForUpdate(c, id);
      if (raw == null) {
        return Optional.<OperationRecord>empty();
      }
      Quarantine.failIfQuarantined(raw);
      OperationRecord r = quarantine.decode(raw);
      if (r.state() != asRead.state() || r.generation() != asRead.generation()
          || !table.settleUncertain(c, id, raw.generation(), owner, change)) {
        return Optional.<OperationRecord>empty();
      }
      // As a re-drive, a claim and the finishing transition leave it; created_at kept (nothing is sent).
      return Optional.of(r.with(settlement.target(), owner, r.generation() + 1, null, null, settlement.at(),
          quarantine.decodeResponse(raw, responseJson), change.reason()).withOutcomeDeliveredAt(null));
    }));
  }

  /**
   * {@inheritDoc}
   *
   * <p>A deferred write (see "Durability"): losing it in a crash hands the outcome over once more,
   * read from the journal.
   */
  @Override
  public boolean recordOutcomeDelivered(OperationId id, Instant at) throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    long atNanos = Instants.toNanos(at);
    if (!holdable(id)) {
      return false;
    }
    return store.write(Durability.DEFERRED, id,
        SqlWork.singleStatement(c -> table.markOutcomeDelivered(c, id, atNanos)));
  }

  /**
   * {@inheritDoc}
   *
   * <p>One deferred unit of work for the batch, where {@link #recordOutcomeDelivered} takes one
   * per operation (a turn on the writer connection's lock each, contended by every resume lane).
   */
  @Override
  public int recordOutcomesDelivered(List<OperationId> ids, Instant at) throws IdempotencyException {
    Objects.requireNonNull(ids, "ids");
    if (ids.isEmpty()) {
      return 0;
    }
    long atNanos = Instants.toNanos(at);
    return store.write(Durability.DEFERRED, null, c -> {
      int recorded = 0;
      for (OperationId id : ids) {
        if (holdable(id) && table.markOutcomeDelivered(c, id, atNanos)) {
          recorded++;
        }
      }
      return recorded;
    });
  }

  @Override
  public List<OperationRecord> findUndelivered(OperationId after, int limit) throws IdempotencyException {
    return page(after, limit, (c, cursor, n) -> table.undelivered(c, cursor, n));
  }

  @Override
  public List<OperationRecord> findDue(Instant now, OperationId after, int limit) throws IdempotencyException {
    long nowNanos = Instants.toNanos(now);
    return page(after, limit, (c, cursor, n) -> table.due(c, nowNanos, cursor, n));
  }

  /**
   * {@inheritDoc}
   *
   * <p>Two queries, each walking an index in its order: the owner's own leases (few), then the
   * rest through {@code idem_operation_due} (PostgreSQL, SQLite), so a page costs about its size
   * however long the backlog. Quarantined rows are skipped as by every query.
   */
  @Override
  public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
      throws IdempotencyException {
    return findDue(now, owner, (List<String>) null, after, limit);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The names are compared in the query ({@code operation IN (...)}, on the due index's entries),
   * so another name's backlog is never read into this process; past
   * {@value OperationTable#MAX_NAMES} names the rows are read and filtered here.
   */
  @Override
  public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
      int limit) throws IdempotencyException {
    List<String> askable = askable(names);
    if (askable.isEmpty()) {
      return List.of();
    }
    if (askable.size() > OperationTable.MAX_NAMES) {
      return Journal.super.findDue(now, owner, Set.copyOf(askable), after, limit);
    }
    return findDue(now, owner, askable, after, limit);
  }

  /**
   * The names of a names overload's read that the database can be asked about.
   *
   * @throws IllegalArgumentException if {@code names} is empty
   */
  private List<String> askable(Set<String> names) {
    if (names.isEmpty()) {
      throw new IllegalArgumentException("names is empty: a page of no names is always empty");
    }
    // A name the database cannot be asked about (a NUL fails every statement on PostgreSQL; a
    // driver sends an unpaired surrogate as '?', another name) is no operation's: begin refuses it.
    List<String> askable = new ArrayList<>(names.size());
    for (String n : names) {
      if (unaskableAt(n) < 0) {
        askable.add(n);
      }
    }
    return askable;
  }

  private List<OperationRecord> findDue(Instant now, String owner, List<String> names, OperationRecord after,
      int limit) throws IdempotencyException {
    Objects.requireNonNull(now, "now");
    Objects.requireNonNull(owner, "owner");
    checkLimit(limit);
    long nowNanos = Instants.toNanos(now);
    List<OperationRecord> result = new ArrayList<>();
    RowKey cursor = after == null ? null : RowKey.of(after.id());
    long chars = 0;
    if (after == null || (after.isLeasedAt(now) && owner.equals(after.owner()))) {
      while (result.size() < limit) {
        int want = limit - result.size();
        RowKey from = cursor;
        List<RawRow> rows = store.read(null, c -> table.ownLeases(c, nowNanos, owner, names, from, want));
        addDecoded(rows, result);
        if (OperationTable.lastRows(rows, want)) {
          break;
        }
        chars += OperationTable.storedChars(rows);
        if (shortPageDue(result, chars)) {
          return result;  // the next page goes on from its last own lease
        }
        cursor = OperationTable.rowKey(rows.get(rows.size() - 1));
      }
      cursor = null;
    }
    long dueAt = cursor == null ? 0 : dueAt(after);
    while (result.size() < limit) {
      int want = limit - result.size();
      RowKey from = cursor;
      long fromDueAt = dueAt;
      List<RawRow> rows = store.read(null, c -> table.dueOldestFirst(c, nowNanos, names, fromDueAt, from, want));
      addDecoded(rows, result);
      if (OperationTable.lastRows(rows, want)) {
        break;
      }
      chars += OperationTable.storedChars(rows);
      if (shortPageDue(result, chars)) {
        break;
      }
      RawRow last = rows.get(rows.size() - 1);
      cursor = OperationTable.rowKey(last);
      dueAt = OperationTable.dueAt(last);
    }
    return result;
  }

  /**
   * Whether a page holding {@code result}, read from rows of {@code chars} characters of stored
   * text, ends here short: once its reads took {@link OperationTable#PAGE_READ_CHARS}, unless every
   * row they took was set aside as undecodable (an empty page would say there is no more).
   */
  private static boolean shortPageDue(List<?> result, long chars) {
    return !result.isEmpty() && chars >= OperationTable.PAGE_READ_CHARS;
  }

  private void addDecoded(List<RawRow> rows, List<OperationRecord> into) throws IdempotencyException {
    List<OperationRecord> decoded = quarantine.decodeAll(rows);
    remember(rows, decoded);
    into.addAll(decoded);
  }

  /**
   * Refuses text the journal does not store as itself. An unpaired UTF-16 surrogate, which no
   * Unicode encoding can store: sqlite-jdbc writes it as '?', so scope "t\uD800" was stored as
   * "t?", and one tenant's begin of a key was answered with another tenant's operation (and its own
   * request never sent). A NUL (U+0000), which PostgreSQL's text types refuse: a begin with one
   * failed there as if the database had failed, though the input was at fault. SQLite and H2 store
   * a NUL, but it is refused on every dialect, so that a journal accepts the same identities
   * whichever database holds it. Like a key's check, the message names the field and the position,
   * never the value.
   */
  private static void requireWellFormed(String field, String text) {
    int i = unpairedSurrogateAt(text);
    if (i >= 0) {
      throw new IllegalArgumentException("the operation's " + field + " has an unpaired UTF-16 surrogate at index "
          + i + ", which the journal cannot store as itself (it would read back as another " + field
          + "); nothing was sent");
    }
    i = text.indexOf('\0');
    if (i >= 0) {
      throw new IllegalArgumentException("the operation's " + field + " has a NUL character (U+0000) at index " + i
          + ", which the journal refuses on every database (PostgreSQL cannot store it); nothing was sent");
    }
  }

  /** Where {@code text} has its first unpaired UTF-16 surrogate, or -1 if it has none. */
  private static int unpairedSurrogateAt(String text) {
    for (int i = 0; i < text.length(); i++) {
      char ch = text.charAt(i);
      if (Character.isHighSurrogate(ch) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(ch)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Where {@code text} has its first character that this journal's database cannot be asked about,
   * or -1: an unpaired surrogate (the drivers bind "t\uD800" as "t?", so a find, claim or
   * transition of it reached tenant "t?"'s operation of the same key), and on PostgreSQL a NUL (the
   * statement fails, as a database error). SQLite and H2 are asked about a NUL: begin refuses one,
   * so they find nothing, unless an earlier version stored it, and then they find that operation.
   */
  private int unaskableAt(String text) {
    int i = unpairedSurrogateAt(text);
    return i >= 0 || dialect != Dialect.POSTGRESQL ? i : text.indexOf('\0');
  }

  /**
   * Whether the journal can hold an operation with this identity: none with text it cannot be asked
   * about ({@link #unaskableAt}), since begin refuses those. Every other call that takes an identity
   * from its caller asks this before the database sees it. (A key is visible ASCII.)
   */
  private boolean holdable(OperationId id) {
    return unaskableAt(id.scope()) < 0 && unaskableAt(id.operation()) < 0;
  }

  /**
   * Throws, for an identity that is not {@link #holdable}, what a write on any identity the journal
   * does not hold throws (as the in-memory journal does too), saying why, without the text.
   */
  private void requireHoldable(OperationId id) {
    requireHoldable("scope", id.scope());
    requireHoldable("operation name", id.operation());
  }

  private void requireHoldable(String field, String text) {
    int i = unaskableAt(text);
    if (i >= 0) {
      throw new IllegalStateException("no such operation: its " + field + " has "
          + (text.charAt(i) == '\0' ? "a NUL character (U+0000)" : "an unpaired UTF-16 surrogate") + " at index "
          + i + ", which the journal cannot store, so it holds no operation with that identity (begin refuses one)");
    }
  }

  /** When {@code r} became due, as {@link OperationTable#dueAt(RawRow)} reads it from its row. */
  private static long dueAt(OperationRecord r) {
    Instant at = r.state() == OperationState.IN_FLIGHT ? r.leaseExpiresAt() : r.nextAttemptAt();
    return Instants.toNanos(at == null ? r.updatedAt() : at);
  }

  @Override
  public List<OperationRecord> findByState(OperationState state, OperationId after, int limit)
      throws IdempotencyException {
    Objects.requireNonNull(state, "state");
    return page(after, limit, (c, cursor, n) -> table.inState(c, state, cursor, n));
  }

  /**
   * {@inheritDoc}
   *
   * <p>The names are compared in the query ({@code operation IN (...)}), so another name's
   * operations are never read into this process; past {@value OperationTable#MAX_NAMES} names the
   * rows are read and filtered here. It locks nothing on any database, as
   * {@link #findByState(OperationState, OperationId, int)} does not.
   */
  @Override
  public List<OperationRecord> findByState(OperationState state, Set<String> names, OperationId after, int limit)
      throws IdempotencyException {
    Objects.requireNonNull(state, "state");
    checkLimit(limit);
    List<String> askable = askable(names);
    if (askable.isEmpty()) {
      return List.of();
    }
    if (askable.size() > OperationTable.MAX_NAMES) {
      return Journal.super.findByState(state, Set.copyOf(askable), after, limit);
    }
    return page(after, limit, (c, cursor, n) -> table.inState(c, state, askable, cursor, n));
  }

  /**
   * One page of operations in {@code state}, ordered by identity and paged as {@link #findByState}
   * pages, each as a listing shows it: without its request snapshot and stored response, which
   * this never reads from the database. A page of records holds every request body (up to
   * {@link Builder#maxRequestBodyBytes} each) and stored response; a page of summaries holds their
   * identities and attempts only, for a listing of a journal of large bodies in a small heap (the
   * CLI's {@code journal list} and {@code purge}).
   *
   * <p>A row whose identity, state, fingerprint, times or attempts cannot be decoded is skipped,
   * and quarantined unless the journal is open read-only, as {@link #findByState} does. A row
   * damaged only in its request or stored response is listed: reading the operation itself
   * ({@link #find}, or a resume of an unfinished one) finds that damage and quarantines it then.
   * Thread-safe.
   *
   * @param state the state to list
   * @param after the last identity of the previous page, or null for the first page
   * @param limit the page size, at least 1
   * @return at most {@code limit} summaries, ordered by identity; possibly fewer while more follow
   *     (as {@link #findByState}); empty means there are no more
   * @throws IllegalArgumentException if {@code limit} is less than 1
   * @throws JournalException if the journal cannot be read
   * @throws IdempotencyException if the journal fails in any other way
   */
  public List<OperationSummary> findSummariesByState(OperationState state, OperationId after, int limit)
      throws IdempotencyException {
    Objects.requireNonNull(state, "state");
    return page(after, limit, (c, cursor, n) -> table.summariesInState(c, state, cursor, n),
        rows -> quarantine.decodeAll(rows, this::summary));
  }

  /** A row read without its request and response, as {@link #findSummariesByState} returns it. */
  private OperationSummary summary(RawRow row) throws CorruptRowException {
    OperationState state = RecordCodec.state(row.state());
    OperationId id = RecordCodec.id(row);
    RecordCodec.fingerprint(row);
    int attempts = codec.decodeAttempts(row.attemptsJson()).size();
    try {
      return new OperationSummary(id, state, row.reference(), attempts, Instants.fromNanos(row.createdAt()),
          Instants.fromNanos(row.updatedAt()), row.queued() && state.isTerminal() && row.outcomeDeliveredAt() == null);
    } catch (IllegalArgumentException | NullPointerException e) {
      throw new CorruptRowException("row: inconsistent fields (" + e.getClass().getSimpleName() + ")");
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>Deletes in batches of {@link #PURGE_BATCH} rows, each its own durable transaction, so that a
   * purge of millions of rows neither holds up the app's other journal calls for its whole length
   * nor keeps one transaction of millions of rows. The count returned covers every batch; a failure
   * part-way throws, and the batches before it stay deleted.
   */
  @Override
  public int purge(Instant before) throws IdempotencyException {
    long beforeNanos = Instants.toNanos(before);
    int total = 0;
    OperationTable.Purged batch;
    do {
      batch = store.write(Durability.SYNC, null, c -> table.purge(c, beforeNanos, purgeBatch));
      total += batch.deleted();
    } while (batch.found() >= purgeBatch);
    return total;
  }

  /**
   * Makes every write so far durable (deferred writes included).
   *
   * @throws JournalException if the write fails
   */
  public void flush() throws IdempotencyException {
    store.flush();
  }

  /**
   * Lists quarantined rows, oldest quarantine first.
   *
   * @param limit the most to return, at least 1
   * @return the quarantined operations, at most {@code limit}
   * @throws IdempotencyException if the journal cannot be read
   */
  public List<QuarantinedOperation> findQuarantined(int limit) throws IdempotencyException {
    checkLimit(limit);
    List<RawRow> rows = quarantine.list(limit);
    List<QuarantinedOperation> result = new ArrayList<>(rows.size());
    for (RawRow r : rows) {
      result.add(new QuarantinedOperation(r.scope(), r.operation(), r.key(), r.quarantineReason(),
          Instants.fromNanos(r.quarantinedAt())));
    }
    return result;
  }

  /**
   * {@inheritDoc}
   *
   * <p>One query ({@code COUNT}), never a scan through the rows in Java: metrics gauges call it on
   * every scrape.
   */
  @Override
  public long count(OperationState state) throws IdempotencyException {
    Objects.requireNonNull(state, "state");
    return store.read(null, c -> table.countInState(c, state));
  }

  /**
   * The bytes the journal takes on disk: the database and {@code -wal} files of a SQLite journal,
   * the database file of an app's H2 DataSource, the journal's tables with their indexes on
   * PostgreSQL ({@code pg_total_relation_size}). Reads file sizes or asks PostgreSQL on a connection
   * of its own; never waits for the journal's writes. Bound as a gauge by {@link MicrometerJournalMetrics}.
   *
   * @return the bytes, or -1 if they cannot be measured (an in-memory database, or a journal opened
   *     read-only from a DataSource)
   * @throws IdempotencyException if the files or the database cannot be read
   */
  public long storageSize() throws IdempotencyException {
    return opened.size().bytes();
  }

  /** {@inheritDoc} One query ({@code MIN}), for the same reason as {@link #count}. */
  @Override
  public Optional<Instant> oldestCreatedAt(OperationState state) throws IdempotencyException {
    Objects.requireNonNull(state, "state");
    Long nanos = store.read(null, c -> table.oldestCreatedAt(c, state));
    return nanos == null ? Optional.empty() : Optional.of(Instants.fromNanos(nanos));
  }

  /**
   * Flushes deferred writes and releases the journal's connections (not an app-supplied
   * DataSource) and, for an embedded journal, its directory lock; a clean close tells the next
   * open that nothing was left in flight. Removes the shutdown hook ({@link
   * Builder#closeOnShutdown}) once done: a JVM that begins to exit while it runs (SIGTERM while
   * {@code main} closes the journal) waits for it, at most {@link #SHUTDOWN_CLOSE_TIMEOUT}, rather
   * than halting in its middle. Idempotent; later calls on the journal throw
   * {@link JournalException}. Calls running on other threads while it closes either complete
   * (and are durable) or throw that exception; none is lost after it returned.
   *
   * @throws JournalException if the last writes could not be made durable (the next open then
   *     recovers as after a crash)
   */
  @Override
  public void close() throws IdempotencyException {
    close(Store.CLOSED);
  }

  private void close(String how) throws IdempotencyException {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      opened.close(store, how);
    } finally {
      closeFinished.countDown();
      // Removed once the close is done, not before: a JVM that begins to exit meanwhile (SIGTERM
      // while the app's main thread closes the journal) runs the hook, and the hook waits for this
      // close (closeAtExit) rather than the JVM halting in the middle of it.
      Thread hook = shutdownHook;
      if (hook != null) {
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException exiting) {
          // the JVM is shutting down (this may be the hook's own close): the hook is running or done
        }
      }
    }
  }

  @Override
  public String toString() {
    return "JdbcJournal[" + dialect.name().toLowerCase(Locale.ROOT) + " " + name + "]";
  }

  // ---- internals

  /**
   * Registers the hook that closes this journal when the JVM exits ({@link Builder#closeOnShutdown}).
   *
   * @throws JournalException if the JVM is already shutting down (then the journal is closed)
   */
  private void registerShutdownHook() throws IdempotencyException {
    Thread hook = new Thread(this::closeAtExit, "idem-journal-shutdown-hook");
    shutdownHook = hook;
    try {
      Runtime.getRuntime().addShutdownHook(hook);
    } catch (IllegalStateException e) {
      shutdownHook = null;
      try {
        close();
      } catch (IdempotencyException | RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw new JournalException("cannot open journal " + name + ": the JVM is shutting down", e);
    }
  }

  /**
   * The shutdown hook: closes the journal on a thread of its own and waits for it at most
   * {@link #SHUTDOWN_CLOSE_TIMEOUT}, so that a close stuck on a disk that stopped answering does not
   * hold up the JVM's exit (that thread is a daemon, and the JVM stops it when the hooks are done).
   * Calls that other threads make meanwhile complete or throw a {@link JournalException} that says
   * the journal was closed at exit.
   *
   * <p>A close the app already started on another thread (a {@code main} that closes its
   * resources at the end, when SIGTERM arrives) is waited for in the same way, within the same
   * bound: the JVM halts once the hooks are done, and returning at once let it halt in the middle of
   * that close, before its last commit or before it marked the close clean. (A close cut after
   * SQLite removed the {@code -wal} file is still reopened without loss, whatever the bound: see
   * {@code EmbeddedFiles.markCheckpointedAtClose}.)
   */
  private void closeAtExit() {
    Thread closer = new Thread(() -> {
      try {
        close(CLOSED_AT_EXIT);
        closeFinished.await(); // a close another thread started: bounded by the join below
      } catch (IdempotencyException | RuntimeException e) {
        LOG.warn("Idem journal {}: closing it at JVM exit failed; the next open recovers as after a crash ({})",
            name, e.toString());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "idem-journal-close-at-exit");
    closer.setDaemon(true);
    closer.start();
    try {
      closer.join(Math.max(1, shutdownCloseTimeout.toMillis()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (closer.isAlive()) {
      LOG.warn("Idem journal {}: still closing {} after the JVM began to exit; exiting without waiting longer. The"
          + " next open recovers as after a crash: what was acknowledged as durable is kept, and the deferred"
          + " writes not yet committed are settled by a resend with the same key", name, shutdownCloseTimeout);
    }
  }

  /** Tests only: how many requests the memo keeps ({@link RequestMemo}). */
  int requestsRemembered() {
    return requests.size();
  }

  /** Tests only: the registered shutdown hook, or null. */
  Thread shutdownHook() {
    return shutdownHook;
  }

  private interface PageQuery {
    List<RawRow> fetch(SqlSession c, RowKey after, int limit) throws SQLException;
  }

  /** Decodes the rows of one read of a page, leaving out (and quarantining) those that cannot be. */
  private interface PageDecoder<T> {
    List<T> decode(List<RawRow> rows) throws IdempotencyException;
  }

  /**
   * Reads a page of records, quarantining undecodable rows and reading on past them, short once
   * its reads took {@link OperationTable#PAGE_READ_CHARS}.
   */
  private List<OperationRecord> page(OperationId after, int limit, PageQuery query) throws IdempotencyException {
    return page(after, limit, query, rows -> {
      List<OperationRecord> decoded = quarantine.decodeAll(rows);
      remember(rows, decoded);
      return decoded;
    });
  }

  /**
   * Reads a page, quarantining undecodable rows and reading on past them, short once its reads
   * took {@link OperationTable#PAGE_READ_CHARS} (see {@link #shortPageDue}).
   */
  private <T> List<T> page(OperationId after, int limit, PageQuery query, PageDecoder<T> decoder)
      throws IdempotencyException {
    checkLimit(limit);
    List<T> result = new ArrayList<>();
    RowKey cursor = after == null ? null : RowKey.of(after);
    long chars = 0;
    while (result.size() < limit) {
      int want = limit - result.size();
      RowKey from = cursor;
      List<RawRow> rows = store.read(null, c -> query.fetch(c, from, want));
      result.addAll(decoder.decode(rows));
      if (OperationTable.lastRows(rows, want)) {
        break;
      }
      chars += OperationTable.storedChars(rows);
      if (shortPageDue(result, chars)) {
        break;
      }
      RawRow last = rows.get(rows.size() - 1);
      cursor = OperationTable.rowKey(last);
    }
    return result;
  }

  /**
   * Keeps the requests of the unfinished operations of a page just read (findDue, above all: the
   * resume that follows claims, sends and finishes each), so that their transitions need not parse
   * them again. Each was checked against its row's request_check when it was decoded.
   *
   * <p>The rows are matched by their identity as stored, never parsed: the page holds the rows
   * decoding just set aside too, and one whose key today's rules refuse (an older version accepted
   * a comma) threw out of the whole page here, so one such row stopped every resume pass.
   */
  private void remember(List<RawRow> rows, List<OperationRecord> decoded) {
    if (decoded.isEmpty()) {
      return;
    }
    java.util.Map<RowKey, String> checks = new java.util.HashMap<>(rows.size() * 2);
    for (RawRow r : rows) {
      if (r.requestCheck() != null) {
        checks.put(new RowKey(r.scope(), r.operation(), r.key()), r.requestCheck());
      }
    }
    for (OperationRecord r : decoded) {
      String check = checks.get(RowKey.of(r.id()));
      if (check != null && !r.state().isTerminal()) {
        requests.put(r.id(), check, r.request());
      }
    }
  }

  /** What a failed write of an attempt's outcome leaves behind, for its message. */
  private static final String SENT_ALREADY = "the attempt was already sent; the journal keeps the operation's last"
      + " durable state (IN_FLIGHT at worst), and a resume after a reopen counts that attempt as ambiguous and sends"
      + " it again with the same key";

  /**
   * A write after an attempt whose commit was not confirmed: the journal may hold it (then, if it
   * ended the operation, no resume sends it again) or not (then as {@link #SENT_ALREADY}).
   */
  private static final String SENT_ALREADY_UNCONFIRMED = "the attempt was already sent; the database did not"
      + " confirm the commit of this write, so the journal holds either this write or the operation's last durable"
      + " state before it (IN_FLIGHT at worst: then a resume counts that attempt as ambiguous and sends it again"
      + " with the same key); find(id) tells which";

  /** A claim whose commit was not confirmed: it may hold the operation until its lease expires. */
  private static final String CLAIM_UNCONFIRMED = "nothing was sent for this attempt; the database did not confirm"
      + " the commit of the claim, so the operation is either in its last durable state or IN_FLIGHT under this"
      + " claim until its lease expires, and is resumed with its key either way";

  /**
   * A write after an attempt, committed after the journal's lock file was removed: the database
   * confirmed it, but another process may own the journal, and this one refuses every call now, so
   * find(id) cannot tell anything; a reopen in one process can.
   */
  private static final String SENT_ALREADY_LOCK_LOST = "the attempt was already sent; this write's commit is in the"
      + " journal's file, but the journal's lock file was removed, so another process may own the journal and act"
      + " on the operation (a resume there counts that attempt as ambiguous and sends it again with the same key),"
      + " and this write may not stand as made. This journal refuses every call now (find(id) too): stop every"
      + " process that opened it, reopen it in one process only, and read the operation there";

  /** A claim committed after the journal's lock file was removed: as {@link #SENT_ALREADY_LOCK_LOST}. */
  private static final String CLAIM_LOCK_LOST = "nothing was sent for this attempt; the claim's commit is in the"
      + " journal's file, but the journal's lock file was removed, so another process may own the journal and"
      + " resume the operation with its key. This journal refuses every call now (find(id) too): stop every"
      + " process that opened it, reopen it in one process only, and read the operation there";

  /**
   * A write after an attempt, committed into files removed or replaced under the journal: not
   * durable where the journal lives, and the journal refuses every call now, so find(id) cannot tell.
   */
  private static final String SENT_ALREADY_IN_LOST_FILES = "the attempt was already sent; this write is NOT"
      + " durable: its commit went to the removed or replaced files, which a reopen reads only if they are put"
      + " back. A reopen finds the operation as the files it opens hold it (IN_FLIGHT at worst: then a resume"
      + " counts that attempt as ambiguous and sends it again with the same key). This journal refuses every call"
      + " now (find(id) too)";

  /** A claim committed into files removed or replaced under the journal. */
  private static final String CLAIM_IN_LOST_FILES = "nothing was sent for this attempt; the claim is NOT durable:"
      + " its commit went to the removed or replaced files, which a reopen reads only if they are put back, and"
      + " the operation is resumed with its key either way. This journal refuses every call now (find(id) too)";

  /**
   * What a write whose commit is not confirmed means for the caller, by why it is not: the
   * database did not confirm it ({@link CommitUnconfirmedException}), the lock file went
   * ({@link LockLostException}), or the files did ({@link FilesReplacedException}). The last two
   * break the journal, so their words never send the caller to find(id).
   */
  private record IfUnconfirmed(String commitUnknown, String lockLost, String filesLost) {
    String of(CommitUnconfirmedException e) {
      if (e instanceof LockLostException) {
        return lockLost;
      }
      return e instanceof FilesReplacedException ? filesLost : commitUnknown;
    }
  }

  private static final IfUnconfirmed SENT_ALREADY_IF_UNCONFIRMED = new IfUnconfirmed(SENT_ALREADY_UNCONFIRMED,
      SENT_ALREADY_LOCK_LOST, SENT_ALREADY_IN_LOST_FILES);
  private static final IfUnconfirmed CLAIM_IF_UNCONFIRMED = new IfUnconfirmed(CLAIM_UNCONFIRMED, CLAIM_LOCK_LOST,
      CLAIM_IN_LOST_FILES);

  /**
   * Runs a journal call; if it fails for the journal's own reasons (disk full, corrupt file,
   * closed), the message also says what that means for the request: whether it was sent, and what
   * stays durable. {@code ifUnconfirmed} is for a write whose commit was not confirmed
   * ({@link CommitUnconfirmedException}), which may or may not be durable, so that the message
   * claims no more than is known, in the words for its reason ({@link IfUnconfirmed}). Such a
   * failure stays a CommitUnconfirmedException, of the same class; with a null
   * {@code ifUnconfirmed} it is thrown as it is, for a caller that reads the row again to find out
   * (the begin).
   */
  private static <T> T explained(OperationId id, String consequence, IfUnconfirmed ifUnconfirmed,
      Quarantine.Call<T> call) throws IdempotencyException {
    try {
      return call.run();
    } catch (CommitUnconfirmedException e) {
      if (ifUnconfirmed == null) {
        throw e;
      }
      String message = e.getMessage() + " [" + id + ": " + ifUnconfirmed.of(e) + "]";
      if (e instanceof LockLostException) {
        throw new LockLostException(message, e);
      }
      if (e instanceof FilesReplacedException) {
        throw new FilesReplacedException(message, e);
      }
      throw new CommitUnconfirmedException(message, e);
    } catch (JournalException e) {
      throw new JournalException(e.getMessage() + " [" + id + ": " + consequence + "]", e);
    }
  }

  /** A response this journal just encoded, as a read would return it. */
  private ResponseSnapshot storedForm(String responseJson) {
    try {
      return codec.decodeResponse(responseJson);
    } catch (CorruptRowException e) {
      throw new IllegalStateException("the journal cannot decode a response it just encoded: " + e.getMessage(), e);
    }
  }

  private static RawRow existing(RawRow row, OperationId id) {
    if (row == null) {
      throw new IllegalStateException("no such operation: " + id);
    }
    return row;
  }

  /** The same check as the in-memory journal; the SQL update repeats it as its WHERE clause. */
  private static void fence(RawRow r, OperationId id, Lease lease) throws IdempotencyException {
    Quarantine.failIfQuarantined(r);
    OperationState state = Quarantine.state(r);
    if (state != OperationState.IN_FLIGHT || r.generation() != lease.generation()
        || !lease.owner().equals(r.owner())) {
      throw new StaleOwnerException(id, lease, state + " at generation " + r.generation());
    }
  }

  private static Long nanosOrNull(Instant i) {
    return i == null ? null : Instants.toNanos(i);
  }

  private static void checkLimit(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1: " + limit);
    }
  }

  /**
   * Options of a {@link JdbcJournal}. Not thread-safe; {@link #open()} may be called once per
   * configuration.
   */
  public static final class Builder {
    private final Path directory;
    private final DataSource dataSource;
    private boolean syncToDisk = true;
    private Duration deferredCommitInterval = DEFAULT_DEFERRED_COMMIT_INTERVAL;
    private int maxStoredResponseBody = DEFAULT_MAX_STORED_RESPONSE_BODY;
    private int maxRequestBody = DEFAULT_MAX_REQUEST_BODY;
    private final Set<String> excludedHeaders = new TreeSet<>();
    private Clock clock = Clock.systemUTC();
    private int purgeBatch = PURGE_BATCH;
    /** Null: the default (embedded journals only). */
    private Boolean closeOnShutdown;
    private Duration shutdownCloseTimeout = SHUTDOWN_CLOSE_TIMEOUT;

    private Builder(Path directory, DataSource dataSource) {
      this.directory = directory;
      this.dataSource = dataSource;
    }

    /**
     * An app's H2 DataSource only: whether each group commit is followed by {@code CHECKPOINT SYNC}.
     * Default true. SQLite always syncs its commits ({@code synchronous=FULL}, or the embedded
     * journal's own sync of its {@code -wal} file); PostgreSQL's
     * durable writes commit with {@code synchronous_commit = on}.
     *
     * @param sync false to skip the sync (survives a process crash, not an OS crash)
     * @return this builder
     */
    public Builder syncToDisk(boolean sync) {
      this.syncToDisk = sync;
      return this;
    }

    /**
     * SQLite and H2: the longest a deferred write (a recorded attempt, a transition) waits to be
     * made durable when no durable write comes along to carry it. Default
     * {@link #DEFAULT_DEFERRED_COMMIT_INTERVAL}.
     *
     * @param interval positive, and at most {@code Long.MAX_VALUE} nanoseconds (about 292 years)
     * @return this builder
     * @throws IllegalArgumentException if not positive, or longer than that
     */
    public Builder deferredCommitInterval(Duration interval) {
      if (interval.isNegative() || interval.isZero()) {
        throw new IllegalArgumentException("deferredCommitInterval must be positive: " + interval);
      }
      if (interval.compareTo(MAX_DEFERRED_COMMIT_INTERVAL) > 0) {
        // The store schedules its background commit in nanoseconds: a longer interval does not fit,
        // and each deferred write would then be committed before its caller returns instead.
        throw new IllegalArgumentException("deferredCommitInterval must be at most " + MAX_DEFERRED_COMMIT_INTERVAL
            + " (the longest a delay in nanoseconds can be): " + interval);
      }
      this.deferredCommitInterval = interval;
      return this;
    }

    /**
     * The largest response body kept with a finished operation; a larger one is replaced by the
     * {@link #TRUNCATED_BODY_HEADER} marker. Default {@link #DEFAULT_MAX_STORED_RESPONSE_BODY}.
     * The HTTP adapters keep at most {@link dev.idem.core.spi.ResponseSnapshot#MAX_CAPTURED_BODY}
     * (64 KiB) of a live response, so that a large body streams to the caller instead of filling
     * the heap; a limit above that therefore keeps no more of the bodies they capture.
     *
     * @param bytes the limit, 0 or more
     * @return this builder
     * @throws IllegalArgumentException if {@code bytes} is negative
     */
    public Builder maxStoredResponseBodyBytes(int bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("maxStoredResponseBodyBytes must not be negative: " + bytes);
      }
      this.maxStoredResponseBody = bytes;
      return this;
    }

    /**
     * The largest request body that can be journaled; begin refuses larger ones (so they are not
     * sent). Default {@link #DEFAULT_MAX_REQUEST_BODY}; at most {@link #MAX_REQUEST_BODY_CEILING}
     * (700 KiB), so that the stored JSON fits H2's text columns too (a million characters).
     *
     * @param bytes 0 to 716,800
     * @return this builder
     * @throws IllegalArgumentException if out of range
     */
    public Builder maxRequestBodyBytes(int bytes) {
      if (bytes < 0 || bytes > MAX_REQUEST_BODY_CEILING) {
        throw new IllegalArgumentException("maxRequestBodyBytes must be 0 to " + MAX_REQUEST_BODY_CEILING + ": " + bytes);
      }
      this.maxRequestBody = bytes;
      return this;
    }

    /**
     * More header names (case-insensitive) never stored, in addition to
     * {@link RequestSnapshot#DEFAULT_SECRET_HEADERS}; applies to requests and stored responses.
     *
     * @param names the header names
     * @return this builder
     */
    public Builder excludeHeaders(Collection<String> names) {
      names.forEach(n -> excludedHeaders.add(n.toLowerCase(Locale.ROOT)));
      return this;
    }

    /**
     * The clock for the journal's own timestamps (schema migrations, quarantine). Default UTC system clock.
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Whether the journal registers a JVM shutdown hook that closes it (flushes its deferred writes,
     * then marks the close clean) when the JVM exits normally: {@code main} returns, or
     * {@code System.exit}, or SIGTERM/SIGINT. Default true for the embedded journal
     * ({@link JdbcJournal#embedded}), false for {@link JdbcJournal#dataSource}.
     *
     * <p>Why: a SUCCEEDED outcome is deferred (see "Durability" in the class documentation), and a
     * program that ends without closing the journal would lose the last ones; the next process would
     * send them again (the server replays them) and hand them to the resume handlers a second time.
     * With the hook, a normal exit loses nothing the callers were told, and the next open finds a
     * clean close. The hook gives the close at most {@link #SHUTDOWN_CLOSE_TIMEOUT}; calls other
     * threads make meanwhile complete or throw a {@link JournalException} that says the journal was
     * closed at exit. An explicit {@link JdbcJournal#close()} removes the hook. Runtime.halt, kill -9
     * and power loss run no hook: the journal recovers from them at the next open (class
     * documentation, "Crashes").
     *
     * <p>Turn it off when the app manages the journal's life itself and closes it in a hook of its
     * own after whatever still uses it (an executor, an outbox dispatcher) has stopped, for example
     * a container that closes its beans in order: JVM shutdown hooks run concurrently and in no
     * given order, so the journal's own hook may close it while those still write. A DataSource
     * journal has none by default: a PostgreSQL journal commits every call, and the database of an
     * app's SQLite or H2 DataSource may be closed by the app's own hooks; turn it on for such a
     * journal if the app closes nothing itself.
     *
     * <p>The hook holds the journal until it is closed: an app that opens journals repeatedly must
     * close each.
     *
     * @param close true to close the journal at JVM exit
     * @return this builder
     */
    public Builder closeOnShutdown(boolean close) {
      this.closeOnShutdown = close;
      return this;
    }

    /** Tests only: a shorter bound on the shutdown hook's close, so that a test of it waits little. */
    Builder shutdownCloseTimeout(Duration timeout) {
      this.shutdownCloseTimeout = Objects.requireNonNull(timeout, "timeout");
      return this;
    }

    /** Tests only: a smaller purge batch, so that a test's purge spans several batches cheaply. */
    Builder purgeBatch(int rows) {
      if (rows < 1) {
        throw new IllegalArgumentException("purgeBatch must be positive: " + rows);
      }
      this.purgeBatch = rows;
      return this;
    }

    /**
     * Opens the journal, creating or migrating its schema, and registers its shutdown hook (see
     * {@link #closeOnShutdown}).
     *
     * @return the open journal
     * @throws JournalException if the database cannot be opened, written or migrated, is locked by
     *     another process, is damaged, missing or another journal's, or has a newer schema than
     *     this version of Idem knows, or the JVM is already shutting down
     */
    public JdbcJournal open() throws JournalException {
      StoreOpener opener = new StoreOpener(SCHEMA, syncToDisk, deferredCommitInterval, clock);
      return opened(() -> {
        JdbcJournal journal = directory != null ? opener.openEmbedded(Layout.journal(directory), this::journal)
            : opener.openDataSource(dataSource, this::journal);
        if (closeOnShutdown != null ? closeOnShutdown : directory != null) {
          journal.registerShutdownHook();
        }
        return journal;
      });
    }

    /**
     * The journal over an opened store. Before it is used: rows with unknown states are
     * quarantined, and, where only this process uses the database, what a dead process left in
     * flight is settled ({@link CrashRecovery}).
     */
    private JdbcJournal journal(String name, Dialect dialect, Store store, int schemaVersion,
        StoreOpener.Opened opened) throws IdempotencyException {
      JdbcJournal journal = new JdbcJournal(this, name, dialect, store, schemaVersion, opened);
      journal.quarantine.sweepUnknownStates();
      if (opened.singleProcess()) {
        CrashRecovery.run(store, journal.table, journal.codec, journal.quarantine, clock, opened.crashed(), name, LOG);
      }
      return journal;
    }
  }
}
