package dev.idem.server;

import dev.idem.core.Fingerprint;
import dev.idem.server.internal.HeaderCodec;
import dev.idem.server.internal.SqlDialect;
import dev.idem.server.internal.SqliteReadOnly;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import javax.sql.DataSource;

/**
 * An {@link IdempotencyStore} in a SQL database, over plain JDBC: SQLite embedded for one
 * instance, PostgreSQL for a fleet. The schema (one table, {@code idem_server_record}) is created
 * if missing.
 *
 * <p>The claim is one statement, {@code INSERT ... ON CONFLICT DO UPDATE ... WHERE <takeover
 * allowed> RETURNING}: the database's primary key decides which of two simultaneous requests
 * wins, in this process or another. Completion, renewal and release are {@code UPDATE}s fenced by
 * generation, owner token and (for completion and renewal) an unexpired lease, so a stale handler
 * changes nothing. Times are stored as epoch milliseconds.
 *
 * <p>SQLite runs with {@code journal_mode=WAL}, {@code synchronous=FULL} (a completed result
 * survives power loss) and a busy timeout, through one connection that this store serialises.
 * PostgreSQL takes a connection from the {@link DataSource} per step: give it a pooling one.
 *
 * <p>{@link #openReadOnly} opens an embedded store for inspection beside the service that writes it
 * (the {@code idem} CLI's {@code guard} commands): {@link #find}, {@link #list} and {@link #counts}
 * work, every write throws.
 *
 * <p>Thread-safe. Every method throws {@link IdempotencyStoreException} when the database fails.
 */
public final class JdbcIdempotencyStore implements IdempotencyStore {
  private static final String T = SqlDialect.TABLE;
  private static final String COLUMNS =
      "caller, route, idem_key, fingerprint, state, generation, lease_until, expires_at, status, headers, body, body_omitted";
  private static final String CLAIM = "INSERT INTO " + T
      + " (caller, route, idem_key, fingerprint, state, generation, owner, lease_until, expires_at, body_omitted)"
      + " VALUES (?, ?, ?, ?, 'IN_FLIGHT', 1, ?, ?, ?, 0)"
      + " ON CONFLICT (caller, route, idem_key) DO UPDATE SET fingerprint = excluded.fingerprint,"
      + " state = 'IN_FLIGHT', generation = " + T + ".generation + 1, owner = excluded.owner,"
      + " lease_until = excluded.lease_until, expires_at = excluded.expires_at,"
      + " status = NULL, headers = NULL, body = NULL, body_omitted = 0"
      // the takeover rules of Takeover.allowed, in SQL
      + " WHERE (" + T + ".expires_at <= ? AND NOT (" + T + ".state = 'IN_FLIGHT' AND " + T + ".lease_until > ?))"
      + " OR " + T + ".state = 'RELEASED'"
      + " OR (" + T + ".state = 'IN_FLIGHT' AND " + T + ".lease_until <= ? AND " + T + ".fingerprint = excluded.fingerprint)"
      + " RETURNING generation, owner";
  private static final String FENCE = " WHERE caller = ? AND route = ? AND idem_key = ? AND generation = ? AND owner = ?"
      + " AND state = 'IN_FLIGHT'";
  private static final String RENEW = "UPDATE " + T + " SET lease_until = ?" + FENCE + " AND lease_until > ?";
  private static final String COMPLETE = "UPDATE " + T
      + " SET state = 'COMPLETED', status = ?, headers = ?, body = ?, body_omitted = ?, expires_at = ?"
      + FENCE + " AND lease_until > ?";
  private static final String RELEASE = "UPDATE " + T + " SET state = 'RELEASED'" + FENCE;
  private static final String PURGE = "DELETE FROM " + T
      + " WHERE expires_at <= ? AND NOT (state = 'IN_FLIGHT' AND lease_until > ?)";
  private static final String FIND = "SELECT " + COLUMNS + " FROM " + T
      + " WHERE caller = ? AND route = ? AND idem_key = ?";

  private static final String LIST = "SELECT " + COLUMNS + " FROM " + T;
  private static final String ORDER = " ORDER BY caller, route, idem_key LIMIT ?";
  private static final String AFTER = "(caller, route, idem_key) > (?, ?, ?)";

  private final Connections connections;
  /** Set for {@link #openReadOnly}: the name in the message every write throws. */
  private final String readOnly;

  private JdbcIdempotencyStore(Connections connections, SqlDialect dialect, String readOnly) {
    this.connections = connections;
    this.readOnly = readOnly;
    if (readOnly != null) {
      return;  // reads only what is there: no schema change
    }
    connections.run(c -> {
      try (Statement st = c.createStatement()) {
        for (String ddl : dialect.schema()) {
          st.execute(ddl);
        }
      }
      return null;
    });
  }

  /**
   * Opens (creating if needed) an embedded SQLite store. Needs {@code org.xerial:sqlite-jdbc} on
   * the class path.
   *
   * @param file the database file; its directory must exist
   * @param busyTimeout how long a write waits for another process's write lock; 5 s is plenty
   * @return the store; close it when done
   * @throws IdempotencyStoreException if the database cannot be opened
   */
  public static JdbcIdempotencyStore sqlite(Path file, Duration busyTimeout) {
    Objects.requireNonNull(file, "the idempotency store's database file is null; give its path, such as"
        + " Path.of(\"/var/lib/orders/idem.db\") (its directory must exist)");
    Objects.requireNonNull(busyTimeout, "the idempotency store's busyTimeout is null; give a Duration, such as"
        + " Duration.ofSeconds(5), or call sqlite(file)");
    try {
      Connection c = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
      try (Statement st = c.createStatement()) {
        st.execute("PRAGMA busy_timeout = " + busyTimeout.toMillis());
        st.execute("PRAGMA journal_mode = WAL");
        st.execute("PRAGMA synchronous = FULL");
      }
      return new JdbcIdempotencyStore(new SingleConnection(c), SqlDialect.SQLITE, null);
    } catch (SQLException e) {
      throw new IdempotencyStoreException("could not open the SQLite idempotency store " + file, e);
    }
  }

  /**
   * Opens an embedded SQLite store for reading only, for inspection tools: it may run while the
   * service that owns the store runs. It creates nothing, changes no schema and writes no byte of
   * the database's files (SQLite's read-only mode); every write method throws
   * {@link IdempotencyStoreException}. Needs {@code org.xerial:sqlite-jdbc}.
   *
   * @param file the database file a service opened with {@link #sqlite(Path)}
   * @return the store, read-only; close it when done
   * @throws IdempotencyStoreException if there is no such file, it holds no idempotency records
   *     table, or it cannot be read
   */
  public static JdbcIdempotencyStore openReadOnly(Path file) {
    Objects.requireNonNull(file, "the idempotency store's database file is null; give the path the service"
        + " opened with JdbcIdempotencyStore.sqlite(path)");
    Path db = file.toAbsolutePath().normalize();
    if (Files.isDirectory(db)) {
      throw new IdempotencyStoreException(db + " is a directory; give the store's database file (the path the"
          + " service passes to JdbcIdempotencyStore.sqlite)", null);
    }
    if (!Files.isRegularFile(db)) {
      throw new IdempotencyStoreException("no idempotency store at " + db + ": the file does not exist", null);
    }
    Connection c = null;
    try {
      c = SqliteReadOnly.open(db, 5000);
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
          "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '" + T + "'")) {
        if (!rs.next()) {
          throw new IdempotencyStoreException("no idempotency store at " + db + ": the database has no " + T
              + " table", null);
        }
      }
      return new JdbcIdempotencyStore(new SingleConnection(c), SqlDialect.SQLITE, db.toString());
    } catch (SQLException e) {
      closeQuietly(c);
      throw new IdempotencyStoreException("could not open the SQLite idempotency store " + db + " read-only: "
          + e.getMessage(), e);
    } catch (RuntimeException e) {
      closeQuietly(c);
      throw e;
    }
  }

  private static void closeQuietly(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // failing anyway
      }
    }
  }

  /**
   * Opens an embedded SQLite store with a 5 s busy timeout.
   *
   * @param file the database file; its directory must exist
   * @return the store; close it when done
   * @throws IdempotencyStoreException if the database cannot be opened
   */
  public static JdbcIdempotencyStore sqlite(Path file) {
    return sqlite(file, Duration.ofSeconds(5));
  }

  /**
   * A PostgreSQL store, shared by every instance of a fleet. Needs {@code org.postgresql:postgresql}.
   *
   * @param dataSource connections to the database; a pooling one, since each step takes one
   * @return the store; closing it does not close the data source
   * @throws IdempotencyStoreException if the schema cannot be created
   */
  public static JdbcIdempotencyStore postgres(DataSource dataSource) {
    return new JdbcIdempotencyStore(new PooledConnections(Objects.requireNonNull(dataSource, "the idempotency store's"
        + " dataSource is null; give a pooling DataSource of the PostgreSQL database, or use sqlite(file)")),
        SqlDialect.POSTGRESQL, null);
  }

  @Override
  public ClaimAttempt claim(RecordId id, Fingerprint fingerprint, String owner, Instant now, Instant leaseUntil,
      Instant expiresAt) {
    refuseWriteIfReadOnly();
    return connections.run(c -> {
      try (PreparedStatement ps = c.prepareStatement(CLAIM)) {
        int i = bindId(ps, 1, id);
        ps.setString(i++, fingerprint.hex());
        ps.setString(i++, owner);
        ps.setLong(i++, leaseUntil.toEpochMilli());
        ps.setLong(i++, expiresAt.toEpochMilli());
        ps.setLong(i++, now.toEpochMilli());
        ps.setLong(i++, now.toEpochMilli());
        ps.setLong(i, now.toEpochMilli());
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next() && owner.equals(rs.getString(2))) {
            return new ClaimAttempt.Claimed(rs.getLong(1));
          }
        }
      }
      Optional<StoredRecord> existing = find(c, id);
      return existing.<ClaimAttempt>map(ClaimAttempt.Existing::new).orElseGet(ClaimAttempt.Vanished::new);
    });
  }

  @Override
  public boolean renew(RecordId id, long generation, String owner, Instant now, Instant leaseUntil) {
    refuseWriteIfReadOnly();
    return connections.run(c -> {
      try (PreparedStatement ps = c.prepareStatement(RENEW)) {
        ps.setLong(1, leaseUntil.toEpochMilli());
        int i = bindFence(ps, 2, id, generation, owner);
        ps.setLong(i, now.toEpochMilli());
        return ps.executeUpdate() == 1;
      }
    });
  }

  @Override
  public boolean complete(RecordId id, long generation, String owner, Instant now, StoredResponse response,
      Instant expiresAt) {
    refuseWriteIfReadOnly();
    return connections.run(c -> {
      try (PreparedStatement ps = c.prepareStatement(COMPLETE)) {
        ps.setInt(1, response.status());
        ps.setString(2, HeaderCodec.encode(response.headers()));
        ps.setBytes(3, response.body());
        ps.setInt(4, response.bodyOmitted() ? 1 : 0);
        ps.setLong(5, expiresAt.toEpochMilli());
        int i = bindFence(ps, 6, id, generation, owner);
        ps.setLong(i, now.toEpochMilli());
        return ps.executeUpdate() == 1;
      }
    });
  }

  @Override
  public boolean release(RecordId id, long generation, String owner) {
    refuseWriteIfReadOnly();
    return connections.run(c -> {
      try (PreparedStatement ps = c.prepareStatement(RELEASE)) {
        bindFence(ps, 1, id, generation, owner);
        return ps.executeUpdate() == 1;
      }
    });
  }

  @Override
  public int purgeExpired(Instant now) {
    refuseWriteIfReadOnly();
    return connections.run(c -> {
      try (PreparedStatement ps = c.prepareStatement(PURGE)) {
        ps.setLong(1, now.toEpochMilli());
        ps.setLong(2, now.toEpochMilli());
        return ps.executeUpdate();
      }
    });
  }

  @Override
  public Optional<StoredRecord> find(RecordId id) {
    return connections.run(c -> find(c, id));
  }

  /**
   * Records in key order (caller, route, key), a page at a time, for inspection tools: pass the
   * last record's id as {@code after} to get the next page.
   *
   * @param state only records in this state, or null for all
   * @param after the id of the last record of the previous page, or null for the first page
   * @param limit the most records to return, at least 1
   * @return up to {@code limit} records
   * @throws IllegalArgumentException if {@code limit} is below 1
   */
  public List<StoredRecord> list(RecordState state, RecordId after, int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, not " + limit);
    }
    StringBuilder sql = new StringBuilder(LIST);
    List<String> where = new ArrayList<>();
    if (state != null) {
      where.add("state = ?");
    }
    if (after != null) {
      where.add(AFTER);
    }
    if (!where.isEmpty()) {
      sql.append(" WHERE ").append(String.join(" AND ", where));
    }
    sql.append(ORDER);
    return connections.run(c -> {
      try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
        int i = 1;
        if (state != null) {
          ps.setString(i++, state.name());
        }
        if (after != null) {
          i = bindId(ps, i, after);
        }
        ps.setInt(i, limit);
        List<StoredRecord> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            out.add(record(rs));
          }
        }
        return out;
      }
    });
  }

  /**
   * How many records are in each state.
   *
   * @return a count for every state, zero included
   */
  public Map<RecordState, Long> counts() {
    return connections.run(c -> {
      Map<RecordState, Long> out = new EnumMap<>(RecordState.class);
      for (RecordState s : RecordState.values()) {
        out.put(s, 0L);
      }
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT state, COUNT(*) FROM " + T + " GROUP BY state")) {
        while (rs.next()) {
          out.put(RecordState.valueOf(rs.getString(1)), rs.getLong(2));
        }
      }
      return out;
    });
  }

  private void refuseWriteIfReadOnly() {
    if (readOnly != null) {
      throw new IdempotencyStoreException("the idempotency store " + readOnly + " is open read-only; nothing was"
          + " written", null);
    }
  }

  /** Closes the SQLite connection; a PostgreSQL data source stays open. Idempotent. */
  @Override
  public void close() {
    connections.close();
  }

  private static Optional<StoredRecord> find(Connection c, RecordId id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(FIND)) {
      bindId(ps, 1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(record(rs)) : Optional.empty();
      }
    }
  }

  /** The record at the result set's current row, read with {@link #COLUMNS}. */
  private static StoredRecord record(ResultSet rs) throws SQLException {
    RecordState state = RecordState.valueOf(rs.getString(5));
    Optional<StoredResponse> response = Optional.empty();
    if (state == RecordState.COMPLETED) {
      byte[] body = rs.getBytes(11);
      response = Optional.of(new StoredResponse(rs.getInt(9), HeaderCodec.decode(rs.getString(10)),
          body == null ? new byte[0] : body, rs.getInt(12) != 0));
    }
    return new StoredRecord(new RecordId(rs.getString(1), rs.getString(2), rs.getString(3)),
        new Fingerprint(rs.getString(4)), state, rs.getLong(6), Instant.ofEpochMilli(rs.getLong(7)),
        Instant.ofEpochMilli(rs.getLong(8)), response);
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

  @FunctionalInterface
  private interface SqlWork<T> {
    T apply(Connection c) throws SQLException;
  }

  /** Where connections come from: one serialised SQLite connection, or a pool. */
  private interface Connections {
    <T> T run(SqlWork<T> work);

    void close();
  }

  private static final class SingleConnection implements Connections {
    private final Connection connection;
    // SQLite has one writer at a time anyway; one lock keeps JDBC's single connection safe.
    private final ReentrantLock lock = new ReentrantLock();
    private volatile boolean closed;

    SingleConnection(Connection connection) {
      this.connection = connection;
    }

    @Override
    public <T> T run(SqlWork<T> work) {
      lock.lock();
      try {
        if (closed) {
          throw new IdempotencyStoreException("the SQLite idempotency store is closed", null);
        }
        return work.apply(connection);
      } catch (SQLException e) {
        throw new IdempotencyStoreException("SQLite idempotency store failed: " + e.getMessage(), e);
      } finally {
        lock.unlock();
      }
    }

    @Override
    public void close() {
      lock.lock();
      try {
        if (!closed) {
          closed = true;
          connection.close();
        }
      } catch (SQLException e) {
        throw new IdempotencyStoreException("could not close the SQLite idempotency store", e);
      } finally {
        lock.unlock();
      }
    }
  }

  private static final class PooledConnections implements Connections {
    private final DataSource dataSource;

    PooledConnections(DataSource dataSource) {
      this.dataSource = dataSource;
    }

    @Override
    public <T> T run(SqlWork<T> work) {
      try (Connection c = dataSource.getConnection()) {
        c.setAutoCommit(true);
        return work.apply(c);
      } catch (SQLException e) {
        throw new IdempotencyStoreException("PostgreSQL idempotency store failed: " + e.getMessage(), e);
      }
    }

    @Override
    public void close() {}
  }
}
