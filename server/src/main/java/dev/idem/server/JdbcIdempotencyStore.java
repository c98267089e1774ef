package dev.idem.server;

import dev.idem.core.Fingerprint;
import dev.idem.server.internal.HeaderCodec;
import dev.idem.server.internal.SqlDialect;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
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

  private final Connections connections;

  private JdbcIdempotencyStore(Connections connections, SqlDialect dialect) {
    this.connections = connections;
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
      return new JdbcIdempotencyStore(new SingleConnection(c), SqlDialect.SQLITE);
    } catch (SQLException e) {
      throw new IdempotencyStoreException("could not open the SQLite idempotency store " + file, e);
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
        SqlDialect.POSTGRESQL);
  }

  @Override
  public ClaimAttempt claim(RecordId id, Fingerprint fingerprint, String owner, Instant now, Instant leaseUntil,
      Instant expiresAt) {
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
    return connections.run(c -> {
      try (PreparedStatement ps = c.prepareStatement(RELEASE)) {
        bindFence(ps, 1, id, generation, owner);
        return ps.executeUpdate() == 1;
      }
    });
  }

  @Override
  public int purgeExpired(Instant now) {
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

  /** Closes the SQLite connection; a PostgreSQL data source stays open. Idempotent. */
  @Override
  public void close() {
    connections.close();
  }

  private static Optional<StoredRecord> find(Connection c, RecordId id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(FIND)) {
      bindId(ps, 1, id);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Optional.empty();
        }
        RecordState state = RecordState.valueOf(rs.getString(5));
        Optional<StoredResponse> response = Optional.empty();
        if (state == RecordState.COMPLETED) {
          byte[] body = rs.getBytes(11);
          response = Optional.of(new StoredResponse(rs.getInt(9), HeaderCodec.decode(rs.getString(10)),
              body == null ? new byte[0] : body, rs.getInt(12) != 0));
        }
        return Optional.of(new StoredRecord(new RecordId(rs.getString(1), rs.getString(2), rs.getString(3)),
            new Fingerprint(rs.getString(4)), state, rs.getLong(6), Instant.ofEpochMilli(rs.getLong(7)),
            Instant.ofEpochMilli(rs.getLong(8)), response));
      }
    }
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
