package dev.idem.jdbc;

import dev.idem.core.AttemptRecord;
import dev.idem.core.BeginResult;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.Journal;
import dev.idem.core.JournalException;
import dev.idem.core.Lease;
import dev.idem.core.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RequestSnapshot;
import dev.idem.core.StaleOwnerException;
import dev.idem.core.Transition;
import dev.idem.jdbc.internal.CorruptRowException;
import dev.idem.jdbc.internal.CorruptRowFound;
import dev.idem.jdbc.internal.Dialect;
import dev.idem.jdbc.internal.Durability;
import dev.idem.jdbc.internal.Instants;
import dev.idem.jdbc.internal.JournalOpener;
import dev.idem.jdbc.internal.OpenJournals;
import dev.idem.jdbc.internal.OperationTable;
import dev.idem.jdbc.internal.OperationTable.Change;
import dev.idem.jdbc.internal.OperationTable.RowKey;
import dev.idem.jdbc.internal.Quarantine;
import dev.idem.jdbc.internal.RawRow;
import dev.idem.jdbc.internal.RecordCodec;
import dev.idem.jdbc.internal.SecretHeaders;
import dev.idem.jdbc.internal.SqlSession;
import dev.idem.jdbc.internal.Store;
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
 * A durable {@link Journal} over JDBC: embedded H2 in a directory by default, PostgreSQL for a fleet
 * of processes sharing one database.
 *
 * <h2>Opening</h2>
 * <pre>{@code
 * Journal journal = JdbcJournal.openH2(Path.of("/var/lib/myapp/idem"));   // embedded, one process
 * Journal shared = JdbcJournal.dataSource(pooledPgDataSource).open();      // PostgreSQL fleet
 * }</pre>
 * Opening creates or migrates the schema (forward SQL migrations recorded in
 * {@code idem_schema_version}) and quarantines rows with an unknown state.
 *
 * <h2>Durability</h2>
 * {@link #begin} returns only when the PENDING record is durable: nothing is sent for an operation
 * whose begin did not return. It is the one synchronous durable write before the first send. Later
 * writes ({@link #claim}, {@link #recordAttempt}, {@link #transition}) are visible at once but may
 * be made durable a little later (with the next begin, or within the deferred commit interval);
 * losing them in a crash reverts the operation to an earlier state, from which it is re-sent with
 * the same key: a safe replay. {@link #abandon}, {@link #redrive} and {@link #purge} are durable
 * when they return. {@link #flush()} makes everything durable now; {@link #close()} flushes.
 *
 * <p>An embedded H2 journal in its own directory ({@link #openH2}, {@link #h2}) writes through a
 * write-ahead log, {@code idem-journal.wal}, next to the H2 file. A write is appended to the log
 * and kept in memory; begin returns once the log is forced (one {@code fdatasync}, shared by every
 * write appended meanwhile: group commit). A background thread ({@code idem-journal-applier})
 * copies the logged rows into H2 in batches, and the log is restarted once H2 has them all and is
 * synced; another ({@code idem-journal-log-waker}) wakes the writers of a group commit. Both are
 * daemon threads, stopped by {@link #close()}. Opening after a crash first writes to H2 whatever
 * only the log holds. Why: an H2 commit rewrites a copy-on-write chunk of tens of kilobytes, which
 * cost several fsyncs' worth of CPU per begin when every begin committed H2; appending to the log
 * costs about one fsync.
 * Queries that scan (findDue, findByState, findByReference, purge, counts) first bring H2 up to
 * date, so they see every write. With {@link Builder#syncToDisk(boolean) syncToDisk(false)} the
 * log is written to the OS but not forced: records survive a process crash (kill -9), not an OS
 * crash or power loss. The H2 URL keeps {@code WRITE_DELAY=0}, so that what H2 has committed is in
 * its file before the log that held it is restarted. The journal is its whole directory: copy or
 * move H2's file and the log together, and only while the journal is closed.
 *
 * <p>An app's H2 DataSource ({@link #dataSource}) has no directory of the journal's own: there the
 * journal owns one connection and commits H2 directly, and concurrent callers share commits (group
 * commit): one commit, and one disk sync ({@code CHECKPOINT SYNC}, unless {@code syncToDisk} is
 * off), covers every write made while the previous one ran. An H2 journal belongs to one process:
 * a second process gets a {@link JournalException}.
 *
 * <p>On PostgreSQL every call takes a connection from the app's DataSource (use a pool) and commits
 * before returning; begin commits with {@code synchronous_commit = on}, the deferred writes with
 * {@code off}. Claims use {@code SELECT ... FOR UPDATE SKIP LOCKED} and a fencing generation, so
 * each pending operation is resumed by one process at a time, and a completion from a stale owner
 * updates nothing and throws {@link StaleOwnerException}.
 *
 * <h2>Secrets and sizes</h2>
 * Headers named in {@link RequestSnapshot#DEFAULT_SECRET_HEADERS} (and any given to
 * {@link Builder#excludeHeaders}) are stripped from request snapshots and stored responses, even if
 * the caller forgot to. A response body larger than {@link #DEFAULT_MAX_STORED_RESPONSE_BODY} bytes
 * is not stored: the stored response then has an empty body and the header
 * {@link #TRUNCATED_BODY_HEADER} with the original length. A request body larger than
 * {@link #DEFAULT_MAX_REQUEST_BODY} bytes is refused at begin (so it is never sent).
 *
 * <h2>Bad rows</h2>
 * A row that cannot be decoded (unknown state, snapshot that is not valid JSON) is quarantined:
 * flagged in place with the reason, logged at WARN (identity and reason, never stored values), and
 * skipped by every query; {@link #find} and {@link #begin} of that identity throw a
 * {@link JournalException}. List them with {@link #findQuarantined(int)}.
 *
 * <p>Thread-safe. Every method throws {@link JournalException} when the journal cannot be read or
 * written (locked, read-only, disk full, database down) or is closed.
 */
public final class JdbcJournal implements Journal {
  /** The default largest response body stored with a finished operation: 64 KiB. */
  public static final int DEFAULT_MAX_STORED_RESPONSE_BODY = 64 * 1024;
  /** The default largest request body journaled: 512 KiB. Larger requests are refused at begin. */
  public static final int DEFAULT_MAX_REQUEST_BODY = 512 * 1024;
  /** The default longest wait before a deferred write is committed (H2): 100 ms. */
  public static final Duration DEFAULT_DEFERRED_COMMIT_INTERVAL = Duration.ofMillis(100);
  /**
   * Set on a stored response whose body was too large to keep; the value is the original body
   * length in bytes, and the stored body is empty.
   */
  public static final String TRUNCATED_BODY_HEADER = "idem-journal-body-truncated";
  /** How many rows one transaction of {@link #purge} deletes at most: 1,000. */
  public static final int PURGE_BATCH = 1000;

  private static final Logger LOG = LoggerFactory.getLogger(JdbcJournal.class);

  private final String name;
  private final Dialect dialect;
  private final Store store;
  private final OperationTable table;
  private final RecordCodec codec;
  private final Quarantine quarantine;
  private final SecretHeaders secrets;
  private final int maxRequestBody;
  private final int schemaVersion;
  private final Path registeredDirectory;
  private final int purgeBatch;

  private JdbcJournal(Builder b, String name, Dialect dialect, Store store, int schemaVersion,
      Path registeredDirectory) {
    this.name = name;
    this.dialect = dialect;
    this.store = store;
    this.table = store.table(dialect);
    this.codec = new RecordCodec(b.maxStoredResponseBody, TRUNCATED_BODY_HEADER);
    this.quarantine = new Quarantine(name, store, table, codec, b.clock, LOG);
    this.secrets = new SecretHeaders(name, b.excludedHeaders, LOG);
    this.maxRequestBody = b.maxRequestBody;
    this.schemaVersion = schemaVersion;
    this.registeredDirectory = registeredDirectory;
    this.purgeBatch = b.purgeBatch;
  }

  /**
   * Opens (creating if needed) an embedded H2 journal in {@code directory} with the default
   * settings. The directory gets permissions {@code rwx------} and the data file {@code rw-------}.
   *
   * @throws JournalException if the directory cannot be created or written, or another process or
   *     another journal in this JVM has the journal open
   */
  public static JdbcJournal openH2(Path directory) throws JournalException {
    return h2(directory).open();
  }

  /** Starts a builder for an embedded H2 journal in {@code directory}. */
  public static Builder h2(Path directory) {
    return new Builder(Objects.requireNonNull(directory, "directory"), null);
  }

  /**
   * Starts a builder for a journal in the database of {@code dataSource}: PostgreSQL (a connection
   * per call, so give it a pool) or H2 (one connection held for the journal's life, plus one for
   * disk syncs with {@code CHECKPOINT SYNC} unless {@code syncToDisk} is off). The DataSource stays
   * the app's: {@link #close()} does not close it.
   */
  public static Builder dataSource(DataSource dataSource) {
    return new Builder(null, Objects.requireNonNull(dataSource, "dataSource"));
  }

  /** The schema version of the journal's database after opening. */
  public int schemaVersion() {
    return schemaVersion;
  }

  @Override
  public BeginResult begin(NewOperation operation) throws IdempotencyException {
    Objects.requireNonNull(operation, "operation");
    OperationId id = operation.id();
    RequestSnapshot request = secrets.strip(operation.request(), id);
    if (request.bodyLength() > maxRequestBody) {
      throw new JournalException("cannot journal " + id + ": its request body has " + request.bodyLength()
          + " bytes, more than the journal's limit of " + maxRequestBody + " (maxRequestBodyBytes); nothing was sent",
          null);
    }
    NewOperation stored = request == operation.request() ? operation
        : new NewOperation(id, operation.reference(), operation.fingerprint(), request, operation.createdAt());
    OperationTable.NewRow row = new OperationTable.NewRow(id, operation.reference(), operation.fingerprint().hex(),
        codec.encodeRequest(request), Instants.toNanos(operation.createdAt()));
    RawRow existing = store.write(Durability.SYNC, id,
        c -> table.insertIfAbsent(c, row) ? null : table.select(c, id, null));
    if (existing == null) {
      return new BeginResult(OperationRecord.pending(stored), true);
    }
    OperationRecord r = quarantine.decodeOrQuarantine(existing);
    if (!r.fingerprint().equals(operation.fingerprint())) {
      throw new IdempotencyKeyReusedException(id, false, "key " + id.key() + " is already journaled for "
          + id.scope() + "/" + id.operation() + " with another request fingerprint; refusing to send");
    }
    return new BeginResult(r, false);
  }

  @Override
  public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    RawRow row = store.read(id, c -> table.select(c, id, null));
    return row == null ? Optional.empty() : Optional.of(quarantine.decodeOrQuarantine(row));
  }

  @Override
  public List<OperationRecord> findByReference(String scope, String reference) throws IdempotencyException {
    Objects.requireNonNull(scope, "scope");
    Objects.requireNonNull(reference, "reference");
    return quarantine.decodeAll(store.read(null, c -> table.byReference(c, scope, reference)));
  }

  @Override
  public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(owner, "owner");
    if (leaseFor.isNegative() || leaseFor.isZero()) {
      throw new IllegalArgumentException("leaseFor must be positive: " + leaseFor);
    }
    long nowNanos = Instants.toNanos(now);
    Instant expiresAt = now.plus(leaseFor);
    long expiresNanos = Instants.toNanos(expiresAt);
    return quarantine.quarantining(() -> store.write(Durability.DEFERRED, id, c -> {
      RawRow r = table.selectForClaim(c, id);
      if (r == null) {
        if (table.exists(c, id)) {
          return Optional.<Lease>empty(); // another process is claiming or updating it right now
        }
        throw new IllegalStateException("no such operation: " + id);
      }
      Quarantine.failIfQuarantined(r);
      OperationState state = Quarantine.state(r);
      boolean leased = state == OperationState.IN_FLIGHT && r.leaseExpiresAt() != null
          && r.leaseExpiresAt() > nowNanos;
      if (!(state == OperationState.PENDING || (state == OperationState.IN_FLIGHT && !leased))) {
        return Optional.<Lease>empty();
      }
      OperationState.checkTransition(state, OperationState.IN_FLIGHT);
      long generation = r.generation() + 1;
      if (!table.claim(c, id, r.state(), r.generation(), owner, generation, expiresNanos, nowNanos)) {
        return Optional.<Lease>empty();
      }
      return Optional.of(new Lease(owner, generation, expiresAt));
    }));
  }

  @Override
  public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(lease, "lease");
    Objects.requireNonNull(attempt, "attempt");
    long at = Instants.toNanos(attempt.endedAt());
    quarantine.quarantining(() -> store.write(Durability.DEFERRED, id, c -> {
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
    }));
  }

  @Override
  public OperationRecord transition(OperationId id, Lease lease, Transition t) throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(lease, "lease");
    Objects.requireNonNull(t, "transition");
    String responseJson = codec.encodeResponse(t.response(), secrets.forResponses());
    Change change = new Change(t.target(), nanosOrNull(t.nextAttemptAt()), Instants.toNanos(t.at()), responseJson,
        OperationTable.cut(t.reason()));
    return quarantine.quarantining(() -> store.write(Durability.DEFERRED, id, c -> {
      RawRow raw = existing(table.select(c, id, null), id);
      OperationRecord r = quarantine.decode(raw);
      fence(raw, id, lease);
      OperationState.checkTransition(r.state(), t.target());
      if (!table.transitionFenced(c, id, lease.owner(), lease.generation(), change)) {
        throw new StaleOwnerException(id, lease, "changed concurrently");
      }
      return r.with(t.target(), r.owner(), r.generation(), null, t.nextAttemptAt(), t.at(),
          quarantine.decodeResponse(raw, responseJson), change.reason());
    }));
  }

  @Override
  public OperationRecord abandon(OperationId id, Transition t) throws IdempotencyException {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(t, "transition");
    String responseJson = codec.encodeResponse(t.response(), secrets.forResponses());
    Change change = new Change(t.target(), nanosOrNull(t.nextAttemptAt()), Instants.toNanos(t.at()), responseJson,
        OperationTable.cut(t.reason()));
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
    long nowNanos = Instants.toNanos(now);
    return quarantine.quarantining(() -> store.write(Durability.SYNC, id, c -> {
      RawRow raw = existing(table.selectForUpdate(c, id), id);
      Quarantine.failIfQuarantined(raw);
      OperationRecord r = quarantine.decode(raw);
      OperationState.checkRedrive(r.state());
      String reason = "re-driven from " + r.state();
      if (!table.transitionUnheld(c, id, raw.state(), raw.generation(),
          new Change(OperationState.PENDING, null, nowNanos, null, reason))) {
        throw new IllegalStateException("operation " + id + " changed while it was being re-driven; try again");
      }
      return r.with(OperationState.PENDING, r.owner(), r.generation(), null, null, now, null, reason);
    }));
  }

  @Override
  public List<OperationRecord> findDue(Instant now, OperationId after, int limit) throws IdempotencyException {
    long nowNanos = Instants.toNanos(now);
    return page(after, limit, (c, cursor, n) -> table.due(c, nowNanos, cursor, n));
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
   * Flushes deferred writes and releases the journal's connections (not an app-supplied
   * DataSource); an embedded H2 journal first copies every logged row into H2 and restarts its
   * log, so the next open has nothing to replay. Idempotent; later calls on the journal throw
   * {@link JournalException}.
   */
  @Override
  public void close() throws IdempotencyException {
    try {
      store.close();
    } finally {
      if (registeredDirectory != null) {
        OpenJournals.release(registeredDirectory);
      }
    }
  }

  @Override
  public String toString() {
    return "JdbcJournal[" + dialect.name().toLowerCase(Locale.ROOT) + " " + name + "]";
  }

  // ---- internals

  private interface PageQuery {
    List<RawRow> fetch(SqlSession c, RowKey after, int limit) throws SQLException;
  }

  /** Fills a page, quarantining undecodable rows and reading on past them. */
  private List<OperationRecord> page(OperationId after, int limit, PageQuery query) throws IdempotencyException {
    checkLimit(limit);
    List<OperationRecord> result = new ArrayList<>();
    RowKey cursor = after == null ? null : RowKey.of(after);
    while (result.size() < limit) {
      int want = limit - result.size();
      RowKey from = cursor;
      List<RawRow> rows = store.read(null, c -> query.fetch(c, from, want));
      result.addAll(quarantine.decodeAll(rows));
      if (rows.size() < want) {
        break;
      }
      RawRow last = rows.get(rows.size() - 1);
      cursor = new RowKey(last.scope(), last.operation(), last.key());
    }
    return result;
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

    private Builder(Path directory, DataSource dataSource) {
      this.directory = directory;
      this.dataSource = dataSource;
    }

    /**
     * H2 only: whether each group commit is forced to the disk (an fdatasync of the journal's log;
     * {@code CHECKPOINT SYNC} for an app's H2 DataSource). Default true: a begun operation survives
     * an OS crash or power loss, as far as the disk honours the flush. With false, it survives a
     * process crash (kill -9) but not an OS crash, and begin is cheaper by that sync.
     */
    public Builder syncToDisk(boolean sync) {
      this.syncToDisk = sync;
      return this;
    }

    /**
     * H2 only: the longest a deferred write (claim, attempt, transition) waits to be made durable
     * when no begin comes along to carry it. Default {@link #DEFAULT_DEFERRED_COMMIT_INTERVAL}.
     */
    public Builder deferredCommitInterval(Duration interval) {
      if (interval.isNegative() || interval.isZero()) {
        throw new IllegalArgumentException("deferredCommitInterval must be positive: " + interval);
      }
      this.deferredCommitInterval = interval;
      return this;
    }

    /**
     * The largest response body kept with a finished operation; a larger one is replaced by the
     * {@link #TRUNCATED_BODY_HEADER} marker. Default {@link #DEFAULT_MAX_STORED_RESPONSE_BODY}.
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
     * sent). Default {@link #DEFAULT_MAX_REQUEST_BODY}; at most 700 KiB on H2, whose text columns
     * hold up to a million characters of JSON.
     */
    public Builder maxRequestBodyBytes(int bytes) {
      if (bytes < 0 || bytes > 700 * 1024) {
        throw new IllegalArgumentException("maxRequestBodyBytes must be 0 to 716800: " + bytes);
      }
      this.maxRequestBody = bytes;
      return this;
    }

    /**
     * More header names (case-insensitive) never stored, in addition to
     * {@link RequestSnapshot#DEFAULT_SECRET_HEADERS}; applies to requests and stored responses.
     */
    public Builder excludeHeaders(Collection<String> names) {
      names.forEach(n -> excludedHeaders.add(n.toLowerCase(Locale.ROOT)));
      return this;
    }

    /** The clock for the journal's own timestamps (schema migrations, quarantine). Default UTC system clock. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
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
     * Opens the journal, creating or migrating its schema.
     *
     * @throws JournalException if the database cannot be opened, written or migrated, is locked by
     *     another process, or has a newer schema than this version of Idem knows
     */
    public JdbcJournal open() throws JournalException {
      JournalOpener opener = new JournalOpener(syncToDisk, deferredCommitInterval, clock);
      try {
        return directory != null ? opener.openH2(directory, this::journal)
            : opener.openDataSource(dataSource, this::journal);
      } catch (JournalException e) {
        throw e;
      } catch (IdempotencyException e) {
        throw new JournalException(e.getMessage(), e);
      }
    }

    /** The journal over an opened store; quarantines rows with unknown states before it is used. */
    private JdbcJournal journal(String name, Dialect dialect, Store store, int schemaVersion, Path registered)
        throws IdempotencyException {
      JdbcJournal journal = new JdbcJournal(this, name, dialect, store, schemaVersion, registered);
      journal.quarantine.sweepUnknownStates();
      return journal;
    }
  }
}
