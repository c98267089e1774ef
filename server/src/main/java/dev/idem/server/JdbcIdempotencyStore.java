package dev.idem.server;

import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.internal.HeaderCodec;
import dev.idem.server.internal.ResponseSeal;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.spi.StoredRecord;
import dev.idem.server.spi.StoredResponse;
import dev.idem.storage.Dialect;
import dev.idem.storage.Durability;
import dev.idem.storage.StoreOpener;
import dev.idem.storage.Layout;
import dev.idem.storage.Schema;
import dev.idem.storage.SingleConnectionStore;
import dev.idem.storage.SingleStatementWork;
import dev.idem.storage.SqlSession;
import dev.idem.storage.SqlWork;
import dev.idem.storage.Store;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.Function;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An {@link IdempotencyStore} in a SQL database, over plain JDBC: SQLite embedded for one
 * instance, PostgreSQL for a fleet. The schema (one table, {@code idem_server_record}) is created
 * if missing, and upgraded in place by versioned migrations (a database made by an earlier version
 * is adopted as it is).
 *
 * <p>The claim of a new key is one statement, {@code INSERT ... ON CONFLICT DO NOTHING}; a key
 * already stored is claimed, in the same transaction, by {@code INSERT ... ON CONFLICT DO UPDATE ...
 * WHERE <takeover allowed> RETURNING}: the database's primary key decides which of two simultaneous
 * requests wins, in this process or another. Completion, renewal and release are {@code UPDATE}s fenced by
 * generation, owner token and (for completion and renewal) an unexpired lease, so a stale handler
 * changes nothing. Times are stored as epoch milliseconds.
 *
 * <p>SQLite runs on the storage layer the journal uses: {@code journal_mode=WAL} (checked, not
 * assumed), every commit on the disk before a durable write returns, one connection, and group
 * commit. While no other connection writes the file, a commit is {@code synchronous=NORMAL} and the
 * store syncs the {@code -wal} file after it, outside its lock, so that the next group's statements
 * run during the sync. It switches to {@code synchronous=FULL} for good when another writer is
 * known: the file holds the app's tables at open, or an earlier run recorded one, or a
 * transactional run is about to claim on the app's connection (it switches first, once every
 * earlier commit is synced), or another connection's commit shows (with a warning). Otherwise an
 * app's commit between the store's commit and its sync could, after a power loss, leave a torn
 * frame of the store's under the app's intact commit, which the check at open refuses as damage
 * (docs/server.md, "The guard's SQLite file and the app's connections"). A completion is durable
 * before its call returns (before the response leaves), and so is every record an answer is read
 * from (a replay, a 409, a 422), but concurrent requests share one commit and one disk sync
 * instead of paying one each. A new claim, a renewal, a release and a purge ride along with the
 * next commit, within 50 ms: a claim lost in a crash lets the retry run at once, as the open does
 * for every claim it finds in flight anyway, so one sync per request is all the guarantee needs.
 * The hot statements are prepared once on the one connection, and each runs without a savepoint
 * (one statement writes at most one row, and a failed one is undone whole). The database file and its companion
 * files are readable by their owner only ({@code rw-------}); the database's integrity and its
 * write-ahead log are checked at open, and a damaged one is refused with what to do. An embedded
 * store belongs to one process: it locks {@code <file>.lock} beside the database, and at open it
 * ends the lease of every claim it finds in flight, since only a dead earlier run of this process
 * can have left them. A retry after a crash and restart is therefore served at once instead of
 * answering 409 until the lease runs out. PostgreSQL takes a connection from the
 * {@link DataSource} per call: give it a pooling one. A fleet cannot tell a dead instance from a
 * slow one; name each instance ({@link IdempotencyGuard.Builder#instanceId}) so that a restarted
 * one reclaims its own claims at once.
 *
 * <p>Thread-safe. Every method throws {@link IdempotencyStoreException} when the database fails.
 */
public final class JdbcIdempotencyStore implements IdempotencyStore {
  private static final Logger LOG = LoggerFactory.getLogger(JdbcIdempotencyStore.class);
  private static final String T = "idem_server_record";
  /** The guard's tables, migrations in this module's resources. */
  static final Schema SCHEMA = new Schema("idempotency store", JdbcIdempotencyStore.class,
      "dev/idem/server/migrations/", "idem_server_schema_version", "idem_server_meta",
      JdbcIdempotencyStore::adoptedVersion);
  /** The longest a renewal, release or purge waits for the next commit: 50 ms. */
  private static final Duration DEFERRED_COMMIT = Duration.ofMillis(50);
  private static final String COLUMNS =
      "caller, route, idem_key, fingerprint, state, generation, lease_until, expires_at, status, headers, body, body_omitted";
  private static final String NEW_CLAIM = "INSERT INTO " + T
      + " (caller, route, idem_key, fingerprint, state, generation, owner, lease_until, expires_at, body_omitted,"
      + " claimed_at, taken_over)"
      + " VALUES (?, ?, ?, ?, 'IN_FLIGHT', 1, ?, ?, ?, 0, ?, 0)";
  /**
   * A first claim of a key: the usual case, and the cheapest statement that makes it. {@link #CLAIM}
   * makes it too, but its RETURNING clause costs SQLite about 3 µs more per request and the driver a
   * result set (the guard's G1 benchmark row, issue 28); a row it finds is left to {@link #CLAIM}.
   */
  private static final String FIRST_CLAIM = NEW_CLAIM + " ON CONFLICT (caller, route, idem_key) DO NOTHING";
  private static final String CLAIM = NEW_CLAIM
      + " ON CONFLICT (caller, route, idem_key) DO UPDATE SET fingerprint = excluded.fingerprint,"
      + " state = 'IN_FLIGHT', generation = " + T + ".generation + 1, owner = excluded.owner,"
      + " lease_until = excluded.lease_until, expires_at = excluded.expires_at,"
      + " status = NULL, headers = NULL, body = NULL, body_omitted = 0, claimed_at = excluded.claimed_at,"
      // RETURNING sees only the new row: whether this claim took over a live-looking one is kept in it
      + " taken_over = CASE WHEN " + T + ".state = 'IN_FLIGHT' THEN 1 ELSE 0 END"
      // the takeover rules of Takeover.allowed, in SQL
      + " WHERE (" + T + ".expires_at <= ? AND NOT (" + T + ".state = 'IN_FLIGHT' AND " + T + ".lease_until > ?))"
      + " OR " + T + ".state = 'RELEASED'"
      + " OR (" + T + ".state = 'IN_FLIGHT' AND " + T + ".lease_until <= ? AND " + T + ".fingerprint = excluded.fingerprint)"
      + " RETURNING generation, owner, taken_over";
  private static final String FENCE = " WHERE caller = ? AND route = ? AND idem_key = ? AND generation = ? AND owner = ?"
      + " AND state = 'IN_FLIGHT'";
  // Renewal and completion are fenced by generation and owner, not by the lease: a lease that ran
  // out with nobody taking over is still this claim's (IdempotencyStore.complete says why).
  private static final String RENEW = "UPDATE " + T + " SET lease_until = ?" + FENCE;
  private static final String STORE_RESULT = "UPDATE " + T
      + " SET state = 'COMPLETED', status = ?, headers = ?, body = ?, body_omitted = ?, expires_at = ?" + FENCE;
  private static final String RELEASE = "UPDATE " + T + " SET state = 'RELEASED'" + FENCE;
  private static final String PURGE = "DELETE FROM " + T
      + " WHERE expires_at <= ? AND NOT (state = 'IN_FLIGHT' AND lease_until > ?)";
  private static final String FIND = "SELECT " + COLUMNS + " FROM " + T
      + " WHERE caller = ? AND route = ? AND idem_key = ?";
  // Epoch 0, not "now": the store has no clock, and no lease can be live at 0.
  private static final String EXPIRE_ALL = "UPDATE " + T + " SET lease_until = 0 WHERE state = 'IN_FLIGHT'"
      + " AND lease_until > 0";
  private static final String EXPIRE_HOLDER = EXPIRE_ALL + " AND substr(owner, 1, ?) = ?";
  // Per state: counts, stuck claims, the oldest claim, the oldest claim within retention, and the
  // oldest expiry of a record the purge may delete (the purge's own condition).
  private static final String STATS = "SELECT state, COUNT(*),"
      + " SUM(CASE WHEN state = 'IN_FLIGHT' AND lease_until <= ? THEN 1 ELSE 0 END), MIN(claimed_at),"
      + " MIN(CASE WHEN expires_at > ? THEN claimed_at END),"
      + " MIN(CASE WHEN expires_at <= ? AND NOT (state = 'IN_FLIGHT' AND lease_until > ?) THEN expires_at END)"
      + " FROM " + T + " GROUP BY state";
  private static final String RECORDS = "SELECT caller, route, idem_key, state, generation, owner, claimed_at,"
      + " lease_until, expires_at, status, taken_over FROM " + T + " WHERE claimed_at <= ?";

  private final Store store;
  private final Dialect dialect;
  private final StoreOpener.Opened opened;

  private JdbcIdempotencyStore(Store store, Dialect dialect, StoreOpener.Opened opened) {
    this.store = store;
    this.dialect = dialect;
    this.opened = opened;
  }

  /**
   * Opens (creating if needed) an embedded SQLite store, for one process. Needs
   * {@code org.xerial:sqlite-jdbc} on the class path. Locks {@code <file>.lock} (and
   * {@code <file>.idem-idempotency-store.lock}, the file's lock that any open of the store on it
   * takes), and ends the lease
   * of every claim left in flight by an earlier run: that run is dead, so the next request with one
   * of those keys (and the same payload) runs at once.
   *
   * @param file the database file; its directory must exist
   * @param busyTimeout how long a read-only reader beside the store (the CLI) may hold up a write;
   *     5 s is plenty
   * @return the store; close it when done
   * @throws IdempotencyStoreException if the database cannot be opened, is damaged, or another store
   *     (in this process or another) has it open
   */
  public static JdbcIdempotencyStore sqlite(Path file, Duration busyTimeout) {
    Objects.requireNonNull(file, "the idempotency store's database file is null; give its path, such as"
        + " Path.of(\"/var/lib/orders/idem.db\") (its directory must exist)");
    Objects.requireNonNull(busyTimeout, "the idempotency store's busyTimeout is null; give a Duration, such as"
        + " Duration.ofSeconds(5), or call sqlite(file)");
    Path absolute = file.toAbsolutePath().normalize();
    Layout layout = Layout.file(absolute, "idempotency store", "JdbcIdempotencyStore");
    return translated("could not open the SQLite idempotency store " + absolute + ": ",
        () -> new StoreOpener(SCHEMA, false, DEFERRED_COMMIT, Clock.systemUTC()).openEmbedded(layout,
          (name, dialect, store, version, opened) -> {
            int dead = store.write(Durability.SYNC, null, s -> {
              try (Statement st = s.connection().createStatement()) {
                st.execute("PRAGMA busy_timeout = " + busyTimeout.toMillis());
                return st.executeUpdate(EXPIRE_ALL);
              }
            });
            if (dead > 0) {
              LOG.warn("Idempotency store {}: {} claims were left in flight by an earlier run that did not close"
                  + " the store; their leases end now, so a retry of each runs at once", name, dead);
            }
            return new JdbcIdempotencyStore(store, dialect, opened);
          }));
  }

  /**
   * Opens an embedded SQLite store with a 5 s busy timeout.
   *
   * @param file the database file; its directory must exist
   * @return the store; close it when done
   * @throws IdempotencyStoreException if the database cannot be opened, or another store has it open
   */
  public static JdbcIdempotencyStore sqlite(Path file) {
    return sqlite(file, Duration.ofSeconds(5));
  }

  /**
   * Opens an embedded SQLite store for reading only, for inspection tools such as the CLI: it may
   * run while the service that owns the store runs. It takes no lock, creates nothing, changes no
   * schema and writes no byte of the database's files (SQLite's read-only mode); every write method
   * throws {@link IdempotencyStoreException}. Needs {@code org.xerial:sqlite-jdbc}.
   *
   * <p>All its reads are one snapshot, taken by the first: what {@code stats} counts is what
   * {@code records} lists, however long the reading takes. Writes the service makes later are seen
   * by a store opened later. Keep it open only as long as one inspection needs: while it is open,
   * SQLite cannot restart the service's {@code -wal} file, which then grows.
   *
   * @param file the database file a service opened with {@link #sqlite(Path)}
   * @return the store, read-only; close it when done
   * @throws IdempotencyStoreException if there is no such file, it holds no idempotency records
   *     table (or one this version does not read), or it cannot be read
   */
  public static JdbcIdempotencyStore openReadOnly(Path file) {
    Objects.requireNonNull(file, "the idempotency store's database file is null; give the path the service"
        + " opened with JdbcIdempotencyStore.sqlite(path)");
    Layout layout = Layout.file(file, "idempotency store", "JdbcIdempotencyStore");
    return translated("", () -> new StoreOpener(SCHEMA, false, DEFERRED_COMMIT, Clock.systemUTC())
        .openEmbeddedReadOnly(layout, (name, dialect, store, version, opened) -> new JdbcIdempotencyStore(store,
            dialect, opened)));
  }

  /**
   * A PostgreSQL store, shared by every instance of a fleet. Needs {@code org.postgresql:postgresql}.
   *
   * @param dataSource connections to the database; a pooling one, since each call takes one
   * @return the store; closing it does not close the data source
   * @throws IdempotencyStoreException if the database is not PostgreSQL, or the schema cannot be
   *     created or upgraded
   */
  public static JdbcIdempotencyStore postgres(DataSource dataSource) {
    Objects.requireNonNull(dataSource, "the idempotency store's dataSource is null; give a pooling DataSource of"
        + " the PostgreSQL database, or use sqlite(file)");
    return translated("could not open the PostgreSQL idempotency store: ",
        () -> new StoreOpener(SCHEMA, false, DEFERRED_COMMIT, Clock.systemUTC()).openDataSource(dataSource,
          (name, dialect, store, version, opened) -> {
            if (dialect != Dialect.POSTGRESQL) {
              throw new JournalException("JdbcIdempotencyStore.postgres needs a PostgreSQL DataSource, not "
                  + dialect + " (for one process, use JdbcIdempotencyStore.sqlite(file))", null);
            }
            return new JdbcIdempotencyStore(store, dialect, opened);
          }));
  }

  /**
   * Which of the migrations a database from before versioned migrations holds: SQLite cannot add a
   * column only if it is missing, so a table with {@code claimed_at} and {@code taken_over} is taken
   * as version 2 as it is. PostgreSQL's migrations are idempotent, and run again harmlessly.
   */
  static int adoptedVersion(Connection c, Dialect dialect) throws SQLException {
    if (dialect != Dialect.SQLITE) {
      return 0;
    }
    Set<String> columns = new HashSet<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("PRAGMA table_info(" + T + ")")) {
      while (rs.next()) {
        columns.add(rs.getString("name").toLowerCase(Locale.ROOT));
      }
    }
    return columns.contains("claimed_at") && columns.contains("taken_over") ? 2 : 0;
  }

  @Override
  public ClaimAttempt claim(RecordId id, Fingerprint fingerprint, String owner, Instant now, Instant leaseUntil,
      Instant expiresAt) {
    // On the embedded SQLite store a new claim rides on the next commit: its open ends every claim
    // in flight, so after a crash a claim that reached the disk and one that did not let the retry
    // run alike, and the completion (SYNC, committed after it) carries it to the disk before any
    // answer leaves. Not on PostgreSQL: other instances go on running while the database restarts,
    // and a claim lost there would let one of them run a retry beside the handler still holding it.
    // An answer read from an existing record (409, 422, a replay) waits for that record.
    Durability fresh = dialect == Dialect.POSTGRESQL ? Durability.SYNC : Durability.DEFERRED;
    id.requireStorable();
    return write(id, s -> claimOn(s, id, fingerprint, owner, now, leaseUntil, expiresAt),
        a -> a instanceof ClaimAttempt.Existing ? Durability.SYNC : fresh);
  }

  @Override
  public boolean renew(RecordId id, long generation, String owner, Instant now, Instant leaseUntil) {
    return write(Durability.DEFERRED, id, RENEW, ps -> {
      ps.setLong(1, leaseUntil.toEpochMilli());
      bindFence(ps, 2, id, generation, owner);
      return ps.executeUpdate() == 1;
    });
  }

  @Override
  public boolean complete(RecordId id, long generation, String owner, Instant now, StoredResponse response,
      Instant expiresAt) {
    // Sealed before the write: the checksum's SHA-256 then runs beside other requests' statements,
    // not under the one connection's statement lock, where every other request would wait for it.
    Sealed sealed = seal(id, response);
    return write(Durability.SYNC, id, STORE_RESULT, ps -> {
      bindResult(ps, id, generation, owner, response, sealed, expiresAt);
      return ps.executeUpdate() == 1;
    });
  }

  @Override
  public boolean release(RecordId id, long generation, String owner) {
    return write(Durability.DEFERRED, id, RELEASE, ps -> {
      bindFence(ps, 1, id, generation, owner);
      return ps.executeUpdate() == 1;
    });
  }

  @Override
  public int purgeExpired(Instant now) {
    return write(Durability.DEFERRED, null, PURGE, ps -> {
      ps.setLong(1, now.toEpochMilli());
      ps.setLong(2, now.toEpochMilli());
      return ps.executeUpdate();
    });
  }

  @Override
  public Optional<StoredRecord> find(RecordId id) {
    // Looked up, such an id would fail on PostgreSQL and find another caller's record on SQLite
    // (the driver writes the surrogate as '?'); no record is stored under it.
    if (id.unstorable() != null) {
      return Optional.empty();
    }
    return read(id, s -> findOn(s, id));
  }

  @Override
  public RecordPage records(RecordQuery query, Instant now) {
    Objects.requireNonNull(query, "query");
    StringBuilder sql = new StringBuilder(RECORDS);
    if (query.state() != null) {
      sql.append(" AND state = ?");
    }
    if (query.stuckOnly()) {
      sql.append(" AND state = 'IN_FLIGHT' AND lease_until <= ?");
    }
    sql.append(" ORDER BY claimed_at, caller, route, idem_key LIMIT ?");
    return read(null, s -> {
      try (PreparedStatement ps = s.connection().prepareStatement(sql.toString())) {
        int i = 1;
        ps.setLong(i++, now.minus(query.olderThan()).toEpochMilli());
        if (query.state() != null) {
          ps.setString(i++, query.state().name());
        }
        if (query.stuckOnly()) {
          ps.setLong(i++, now.toEpochMilli());
        }
        ps.setInt(i, query.limit() + 1);
        List<RecordSummary> out = new ArrayList<>();
        List<RecordId> unreadable = new ArrayList<>();
        boolean more = false;
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            if (out.size() + unreadable.size() == query.limit()) {
              more = true; // the one row past the limit
              break;
            }
            RecordId id = new RecordId(rs.getString(1), rs.getString(2), rs.getString(3));
            RecordState state = stateOf(rs.getString(4));
            if (state == null) {
              // One record this Idem cannot read must not hide every other: skipped and named.
              unreadable.add(id);
              continue;
            }
            int status = rs.getInt(10);
            OptionalInt stored = rs.wasNull() ? OptionalInt.empty() : OptionalInt.of(status);
            out.add(new RecordSummary(id, state, rs.getLong(5), Instant.ofEpochMilli(rs.getLong(7)),
                Instant.ofEpochMilli(rs.getLong(8)), Instant.ofEpochMilli(rs.getLong(9)),
                RecordSummary.holderOf(rs.getString(6)), rs.getInt(11) != 0, stored));
          }
        }
        return new RecordPage(out, more, unreadable);
      }
    });
  }

  @Override
  public RecordStats stats(Instant now) {
    return read(null, s -> {
      long[] n = new long[5];
      Instant oldest = null;
      Instant oldestUnexpired = null;
      Instant oldestPurgeable = null;
      try (PreparedStatement ps = s.connection().prepareStatement(STATS)) {
        for (int i = 1; i <= 4; i++) {
          ps.setLong(i, now.toEpochMilli());
        }
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            oldestUnexpired = earlier(oldestUnexpired, rs.getLong(5), rs.wasNull());
            oldestPurgeable = earlier(oldestPurgeable, rs.getLong(6), rs.wasNull());
            RecordState state = stateOf(rs.getString(1));
            if (state == null) {
              n[4] += rs.getLong(2); // counted apart, as records lists them apart
              continue;
            }
            switch (state) {
              case IN_FLIGHT -> {
                n[0] = rs.getLong(2);
                n[1] = rs.getLong(3);
                oldest = Instant.ofEpochMilli(rs.getLong(4));
              }
              case COMPLETED -> n[2] = rs.getLong(2);
              case RELEASED -> n[3] = rs.getLong(2);
            }
          }
        }
      }
      return new RecordStats(n[0], n[1], n[2], n[3], Optional.ofNullable(oldest),
          Optional.ofNullable(oldestUnexpired), Optional.ofNullable(oldestPurgeable), n[4]);
    });
  }

  /**
   * The state a row stores, or null for one this Idem does not know (a newer Idem's state, a
   * hand edit such as {@code 'released'}): the operator's reads skip and count such a row.
   */
  private static RecordState stateOf(String stored) {
    for (RecordState state : RecordState.values()) {
      if (state.name().equals(stored)) {
        return state;
      }
    }
    return null;
  }

  /** The earlier of {@code a} and the epoch-millis column just read, which may be NULL. */
  private static Instant earlier(Instant a, long millis, boolean wasNull) {
    if (wasNull) {
      return a;
    }
    Instant b = Instant.ofEpochMilli(millis);
    return a == null || b.isBefore(a) ? b : a;
  }

  @Override
  public int expireClaims(String holder) {
    String prefix = Objects.requireNonNull(holder, "holder") + "/";
    return write(Durability.SYNC, null, EXPIRE_HOLDER, ps -> {
      ps.setInt(1, prefix.length());
      ps.setString(2, prefix);
      return ps.executeUpdate();
    });
  }

  /**
   * The bytes the store takes on disk: the SQLite database and {@code -wal} files, or its tables
   * with their indexes on PostgreSQL ({@code pg_total_relation_size}). Reads file sizes or asks
   * PostgreSQL on a connection of its own; never waits for the store's writes. Bound as the gauge
   * {@code idem.storage.size} by {@link dev.idem.server.metrics.MicrometerGuardMetrics}.
   *
   * @return the bytes, or -1 if they cannot be measured (a store opened read-only from a DataSource)
   * @throws IdempotencyStoreException if the files or the database cannot be read
   */
  public long storageSize() {
    try {
      return opened.size().bytes();
    } catch (IdempotencyException e) {
      throw new IdempotencyStoreException("could not measure the idempotency store: " + e.getMessage(), e);
    }
  }

  /**
   * Closes the store: every write so far is committed, then the SQLite connection is closed, a
   * clean close is marked and the lock released. A PostgreSQL data source stays open. Idempotent.
   */
  @Override
  public void close() {
    translated("could not close the idempotency store: ", () -> {
      opened.close(store, Store.CLOSED);
      return null;
    });
  }

  Dialect dialect() {
    return dialect;
  }

  /**
   * Before the app's own connection writes this database (transactional mode): an embedded store
   * that syncs its commits outside its lock switches to syncing inside SQLite's commit, once every
   * commit of its own is on the disk ({@link SingleConnectionStore#expectOtherWriters}). Nothing to
   * do for PostgreSQL or an app's SQLite DataSource, or once done.
   */
  void expectOtherWriters() {
    if (store instanceof SingleConnectionStore s) {
      translated("", () -> {
        s.expectOtherWriters("transactional mode: the app's connections write the same database");
        return null;
      });
    }
  }

  /** Commits every write so far, new claims included (which otherwise ride on the next commit). */
  void flush() {
    translated("", () -> {
      store.flush();
      return null;
    });
  }

  private <T> T read(Object row, SqlWork<T> work) {
    return translated("", () -> store.read(row, work));
  }

  /** A write of one statement of {@code sql}, durable as {@code durability} says when it returns. */
  private <T> T write(Durability durability, Object row, String sql, StatementWork<T> work) {
    return write(row, s -> on(s, sql, work), r -> durability);
  }

  /**
   * A write that changes at most one row with one statement (so it needs no savepoint), durable as
   * {@code durability} says of its result when it returns. Read-only stores refuse it before it
   * reaches the database.
   *
   * @param row the record the write touches, or null for any: a read of that record waits only for
   *     its own durable writes
   */
  private <T> T write(Object row, SingleStatementWork<T> work, Function<? super T, Durability> durability) {
    if (store.readOnly()) {
      throw new IdempotencyStoreException("the idempotency store is open read-only; nothing was written", null);
    }
    return translated("", () -> store.writeDeciding(row, work, durability));
  }

  /**
   * Runs {@code work} on a statement of {@code sql} from the session: prepared once for the embedded
   * store's one connection, so the hot path's SQL is not parsed again on every request.
   */
  private static <T> T on(SqlSession s, String sql, StatementWork<T> work) throws SQLException {
    PreparedStatement ps = s.prepare(sql);
    try {
      return work.apply(ps);
    } finally {
      s.release(ps);
    }
  }

  /** The claim, on a connection the caller holds (in a transaction of its own, for transactional mode). */
  static ClaimAttempt claimOn(SqlSession s, RecordId id, Fingerprint fingerprint, String owner, Instant now,
      Instant leaseUntil, Instant expiresAt) throws SQLException {
    id.requireStorable();
    // No row: inserted at generation 1, taking nothing over, as CLAIM would have. Else CLAIM decides,
    // in the same transaction (a row purged in between is inserted by CLAIM, at generation 1).
    boolean inserted = on(s, FIRST_CLAIM, ps -> {
      bindNewClaim(ps, id, fingerprint, owner, now, leaseUntil, expiresAt);
      return ps.executeUpdate() == 1;
    });
    if (inserted) {
      return new ClaimAttempt.Claimed(1, false);
    }
    ClaimAttempt claimed = on(s, CLAIM, ps -> {
      int i = bindNewClaim(ps, id, fingerprint, owner, now, leaseUntil, expiresAt);
      ps.setLong(i++, now.toEpochMilli());
      ps.setLong(i++, now.toEpochMilli());
      ps.setLong(i, now.toEpochMilli());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && owner.equals(rs.getString(2)) ? new ClaimAttempt.Claimed(rs.getLong(1), rs.getInt(3) != 0)
            : null;
      }
    });
    if (claimed != null) {
      return claimed;
    }
    Optional<StoredRecord> existing = findOn(s, id);
    return existing.<ClaimAttempt>map(ClaimAttempt.Existing::new).orElseGet(ClaimAttempt.Vanished::new);
  }

  /** Binds a new row's values, as {@link #NEW_CLAIM} lists them; returns the next parameter's index. */
  private static int bindNewClaim(PreparedStatement ps, RecordId id, Fingerprint fingerprint, String owner,
      Instant now, Instant leaseUntil, Instant expiresAt) throws SQLException {
    int i = bindId(ps, 1, id);
    ps.setString(i++, fingerprint.hex());
    ps.setString(i++, owner);
    ps.setLong(i++, leaseUntil.toEpochMilli());
    ps.setLong(i++, expiresAt.toEpochMilli());
    ps.setLong(i++, now.toEpochMilli());
    return i;
  }

  /**
   * Stores a result in the transaction that claimed it: fenced by generation and owner, with no
   * lease to check, since the claim is not visible to anyone before the same commit.
   */
  static boolean storeResultOn(Connection c, RecordId id, long generation, String owner, StoredResponse response,
      Instant expiresAt) throws SQLException {
    Sealed sealed = seal(id, response);
    return on(SqlSession.uncached(c), STORE_RESULT, ps -> {
      bindResult(ps, id, generation, owner, response, sealed, expiresAt);
      return ps.executeUpdate() == 1;
    });
  }

  static Optional<StoredRecord> findOn(SqlSession s, RecordId id) throws SQLException {
    return on(s, FIND, ps -> {
      bindId(ps, 1, id);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        RecordState state = RecordState.valueOf(rs.getString(5));
        Optional<StoredResponse> response = Optional.empty();
        if (state == RecordState.COMPLETED) {
          byte[] body = rs.getBytes(11);
          byte[] stored = body == null ? new byte[0] : body;
          String headers = rs.getString(10);
          boolean omitted = rs.getInt(12) != 0;
          if (!ResponseSeal.matches(id.caller(), id.route(), id.key(), rs.getInt(9), headers, stored, omitted)) {
            // Never replay a changed answer as the service's: the key is refused until an operator looks.
            throw new IdempotencyStoreException("the stored response of " + id + " no longer matches its checksum (a"
                + " stored byte changed); it is never replayed, and requests with this key are refused. Inspect the"
                + " record (idem-cli guard list), then delete it to let the key run again, or restore the store from"
                + " a backup", null);
          }
          response = Optional.of(new StoredResponse(rs.getInt(9), HeaderCodec.decode(headers), stored, omitted));
        }
        return Optional.of(new StoredRecord(new RecordId(rs.getString(1), rs.getString(2), rs.getString(3)),
            new Fingerprint(rs.getString(4)), state, rs.getLong(6), Instant.ofEpochMilli(rs.getLong(7)),
            Instant.ofEpochMilli(rs.getLong(8)), response));
      }
    });
  }

  /** The headers text a result is stored with: its checksum line, then its headers. */
  private static Sealed seal(RecordId id, StoredResponse response) {
    byte[] body = response.body(); // a copy: taken once, for the checksum and the row
    return new Sealed(ResponseSeal.seal(id.caller(), id.route(), id.key(), response.status(), response.headers(),
        body, response.bodyOmitted()), body);
  }

  /** A result's headers text with its checksum line, and the body that checksum covers. */
  private record Sealed(String headers, byte[] body) {}

  private static int bindResult(PreparedStatement ps, RecordId id, long generation, String owner,
      StoredResponse response, Sealed sealed, Instant expiresAt) throws SQLException {
    ps.setInt(1, response.status());
    ps.setString(2, sealed.headers());
    ps.setBytes(3, sealed.body());
    ps.setInt(4, response.bodyOmitted() ? 1 : 0);
    ps.setLong(5, expiresAt.toEpochMilli());
    return bindFence(ps, 6, id, generation, owner);
  }

  private static int bindId(PreparedStatement ps, int from, RecordId id) throws SQLException {
    ps.setString(from, id.caller());
    ps.setString(from + 1, id.route());
    ps.setString(from + 2, id.key());
    return from + 3;
  }

  private static int bindFence(PreparedStatement ps, int from, RecordId id, long generation, String owner)
      throws SQLException {
    int i = bindId(ps, from, id);
    ps.setLong(i++, generation);
    ps.setString(i++, owner);
    return i;
  }

  /** Runs a call of the storage layer, reporting its failure as this store's, after {@code context}. */
  private static <T> T translated(String context, StoreCall<T> call) {
    try {
      return call.run();
    } catch (IdempotencyException e) {
      throw new IdempotencyStoreException(context + e.getMessage(), e);
    }
  }

  @FunctionalInterface
  private interface StoreCall<T> {
    T run() throws IdempotencyException;
  }

  @FunctionalInterface
  private interface StatementWork<T> {
    T apply(PreparedStatement ps) throws SQLException;
  }
}
