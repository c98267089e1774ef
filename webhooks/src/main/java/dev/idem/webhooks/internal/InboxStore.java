package dev.idem.webhooks.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.storage.Dialect;
import dev.idem.storage.Durability;
import dev.idem.storage.StoreOpener;
import dev.idem.storage.Schema;
import dev.idem.storage.Store;
import dev.idem.webhooks.AcceptResult;
import dev.idem.webhooks.InboxEntry;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.WebhookInboxException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The inbox's SQL, on the storage layer the journal and the guard use: embedded SQLite with group
 * commit (every write durable when it returns; concurrent deliveries share one commit), or
 * PostgreSQL with a connection from the DataSource per call. Times are epoch milliseconds.
 * Thread-safe.
 */
public final class InboxStore implements AutoCloseable {
  /** The inbox's tables, migrations in this module's resources. */
  public static final Schema SCHEMA = new Schema("webhook inbox", InboxStore.class,
      "dev/idem/webhooks/migrations/", "idem_webhook_schema_version", "idem_webhook_meta", Schema.Adoption.NONE);
  private static final String T = "idem_webhook_inbox";
  private static final String A = "idem_webhook_attempts";
  private static final int MAX_TEXT = 1000;
  private static final String CLAIMED_COLUMNS = "source, event_id, event_type, body, received_at, attempts, runs,"
      + " lease_generation, first_attempt_at, last_delay_ms, body_sha256";
  private static final String DUE = "(state = 'PENDING' AND next_attempt_at <= ?)"
      + " OR (state = 'PROCESSING' AND lease_until < ?)";
  /**
   * PostgreSQL only: claims up to N due rows in one statement, locking them with {@code FOR UPDATE
   * SKIP LOCKED}, so that instances never wait for or take each other's rows. Parameters: now,
   * now, limit, owner, leaseUntil, now.
   */
  private static final String PG_CLAIM = "WITH c AS (SELECT source, event_id FROM " + T + " WHERE " + DUE
      + " ORDER BY next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED)"
      + " UPDATE " + T + " i SET state = 'PROCESSING', attempts = i.attempts + 1, runs = i.runs + 1,"
      + " lease_owner = ?, lease_until = ?, lease_generation = i.lease_generation + 1,"
      + " first_attempt_at = COALESCE(i.first_attempt_at, ?)"
      + " FROM c WHERE i.source = c.source AND i.event_id = c.event_id"
      + " RETURNING i.source, i.event_id, i.event_type, i.body, i.received_at, i.attempts, i.runs,"
      + " i.lease_generation, i.first_attempt_at, i.last_delay_ms, i.body_sha256";

  private final Dialect dialect;
  private final Store store;
  private final StoreOpener.Opened opened;
  private final String name;

  /**
   * @param dialect the database's
   * @param store where the work runs (a read-only store refuses every write)
   * @param opened what the open holds, released by {@link #close()}
   * @param name the inbox's name in messages, such as its directory
   */
  public InboxStore(Dialect dialect, Store store, StoreOpener.Opened opened, String name) {
    this.dialect = dialect;
    this.store = store;
    this.opened = opened;
    this.name = name;
  }

  public boolean isReadOnly() {
    return store.readOnly();
  }

  public Dialect dialect() {
    return dialect;
  }

  /**
   * One durable insert keyed by (source, event id); a known id or signature inserts nothing. The
   * event is stored with its checksum ({@link EventChecksum}), checked when it is claimed or found.
   */
  public AcceptResult insert(String src, String id, String type, byte[] digest, byte[] body, Long signedAtMs,
      long receivedAtMs) {
    return write(List.of(src, id), c -> {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + T + " (source, event_id, event_type,"
          + " signature_digest, body, signed_at, received_at, state, next_attempt_at, body_sha256)"
          + " VALUES (?, ?, ?, ?, ?, ?, ?, 'PENDING', ?, ?) ON CONFLICT DO NOTHING")) {
        ps.setString(1, src);
        ps.setString(2, id);
        ps.setString(3, type);
        ps.setBytes(4, digest);
        ps.setBytes(5, body);
        if (signedAtMs == null) {
          ps.setNull(6, Types.BIGINT);
        } else {
          ps.setLong(6, signedAtMs);
        }
        ps.setLong(7, receivedAtMs);
        ps.setLong(8, receivedAtMs);
        ps.setBytes(9, EventChecksum.of(src, id, type, body));
        if (ps.executeUpdate() == 1) {
          return AcceptResult.ACCEPTED;
        }
      }
      try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM " + T + " WHERE source = ? AND signature_digest = ?")) {
        ps.setString(1, src);
        ps.setBytes(2, digest);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? AcceptResult.REPLAY : AcceptResult.DUPLICATE;
        }
      }
    });
  }

  /**
   * Claims up to {@code limit} due events (PENDING and due, or PROCESSING with an expired lease):
   * each gets a new lease generation, one more attempt, and a started row in the attempt history.
   */
  public List<ClaimedEvent> claim(int limit, String owner, long now, long leaseUntil) {
    return write(null, c -> {
      List<ClaimedEvent> claimed = dialect == Dialect.POSTGRESQL ? claimPostgres(c, limit, owner, now, leaseUntil)
          : claimSqlite(c, limit, owner, now, leaseUntil);
      if (!claimed.isEmpty()) {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + A
            + " (source, event_id, run, owner, started_at) VALUES (?, ?, ?, ?, ?)")) {
          for (ClaimedEvent e : claimed) {
            ps.setString(1, e.source());
            ps.setString(2, e.eventId());
            ps.setInt(3, e.run());
            ps.setString(4, owner);
            ps.setLong(5, now);
            ps.addBatch();
          }
          ps.executeBatch();
        }
      }
      return claimed;
    });
  }

  private static List<ClaimedEvent> claimPostgres(Connection c, int limit, String owner, long now, long leaseUntil)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PG_CLAIM)) {
      ps.setLong(1, now);
      ps.setLong(2, now);
      ps.setInt(3, limit);
      ps.setString(4, owner);
      ps.setLong(5, leaseUntil);
      ps.setLong(6, now);
      try (ResultSet rs = ps.executeQuery()) {
        return claimedRows(rs);
      }
    }
  }

  private static List<ClaimedEvent> claimSqlite(Connection c, int limit, String owner, long now, long leaseUntil)
      throws SQLException {
    List<String[]> keys = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement("SELECT source, event_id FROM " + T + " WHERE " + DUE
        + " ORDER BY next_attempt_at LIMIT ?")) {
      ps.setLong(1, now);
      ps.setLong(2, now);
      ps.setInt(3, limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          keys.add(new String[] {rs.getString(1), rs.getString(2)});
        }
      }
    }
    List<ClaimedEvent> out = new ArrayList<>(keys.size());
    try (PreparedStatement up = c.prepareStatement("UPDATE " + T + " SET state = 'PROCESSING', attempts = attempts + 1,"
        + " runs = runs + 1, lease_owner = ?, lease_until = ?, lease_generation = lease_generation + 1,"
        + " first_attempt_at = COALESCE(first_attempt_at, ?) WHERE source = ? AND event_id = ?");
        PreparedStatement sel = c.prepareStatement("SELECT " + CLAIMED_COLUMNS + " FROM " + T
            + " WHERE source = ? AND event_id = ?")) {
      for (String[] k : keys) {
        up.setString(1, owner);
        up.setLong(2, leaseUntil);
        up.setLong(3, now);
        up.setString(4, k[0]);
        up.setString(5, k[1]);
        up.executeUpdate();
        sel.setString(1, k[0]);
        sel.setString(2, k[1]);
        try (ResultSet rs = sel.executeQuery()) {
          out.addAll(claimedRows(rs));
        }
      }
    }
    return out;
  }

  private static List<ClaimedEvent> claimedRows(ResultSet rs) throws SQLException {
    List<ClaimedEvent> out = new ArrayList<>();
    while (rs.next()) {
      byte[] body = rs.getBytes(4);
      boolean intact = EventChecksum.matches(rs.getBytes(11), rs.getString(1), rs.getString(2), rs.getString(3), body);
      out.add(new ClaimedEvent(rs.getString(1), rs.getString(2), rs.getString(3), body, rs.getLong(5),
          rs.getInt(6), rs.getInt(7), rs.getLong(8), rs.getLong(9), rs.getLong(10), intact));
    }
    return out;
  }

  /** The handler returned: DONE. False if the lease had moved on (nothing changed). */
  public boolean markDone(ClaimedEvent e, long now) {
    return finish(e, now, "UPDATE " + T + " SET state = 'DONE', finished_at = ?, last_error = NULL,"
        + " lease_owner = NULL, lease_until = NULL", null, "done", null, null, -1, -1);
  }

  /** A retryable failure: PENDING again at {@code nextAt}. False if the lease had moved on. */
  public boolean scheduleRetry(ClaimedEvent e, long now, long nextAt, long delayMs, String error, String decision) {
    return finish(e, now, "UPDATE " + T + " SET state = 'PENDING', finished_at = ?, last_error = ?,"
        + " next_attempt_at = ?, last_delay_ms = ?, lease_owner = NULL, lease_until = NULL", error, "retry", decision,
        error, nextAt, delayMs);
  }

  /** A permanent failure or attempts spent: DEAD. False if the lease had moved on. */
  public boolean markDead(ClaimedEvent e, long now, String error, String decision) {
    return finish(e, now, "UPDATE " + T + " SET state = 'DEAD', finished_at = ?, last_error = ?,"
        + " lease_owner = NULL, lease_until = NULL", error, "dead", decision, error, -1, -1);
  }

  private boolean finish(ClaimedEvent e, long now, String update, String lastError, String outcome, String decision,
      String error, long nextAt, long delayMs) {
    return write(List.of(e.source(), e.eventId()), c -> {
      int n;
      try (PreparedStatement ps = c.prepareStatement(update
          + " WHERE source = ? AND event_id = ? AND state = 'PROCESSING' AND lease_generation = ?")) {
        int i = 1;
        // finished_at is cleared again for retries: they are not finished
        if (outcome.equals("retry")) {
          ps.setNull(i++, Types.BIGINT);
        } else {
          ps.setLong(i++, now);
        }
        if (lastError != null || !outcome.equals("done")) {
          ps.setString(i++, clip(lastError));
        }
        if (nextAt >= 0) {
          ps.setLong(i++, nextAt);
          ps.setLong(i++, delayMs);
        }
        ps.setString(i++, e.source());
        ps.setString(i++, e.eventId());
        ps.setLong(i, e.generation());
        n = ps.executeUpdate();
      }
      try (PreparedStatement ps = c.prepareStatement("UPDATE " + A + " SET ended_at = ?, outcome = ?, error = ?,"
          + " decision = ? WHERE source = ? AND event_id = ? AND run = ?")) {
        ps.setLong(1, now);
        ps.setString(2, n == 1 ? outcome : "stale");
        ps.setString(3, clip(error));
        ps.setString(4, clip(n == 1 ? decision : "lease lost before completion; nothing changed"));
        ps.setString(5, e.source());
        ps.setString(6, e.eventId());
        ps.setInt(7, e.run());
        ps.executeUpdate();
      }
      return n == 1;
    });
  }

  /**
   * For an embedded inbox at open: the previous owner is dead (this process holds the lock), so its
   * leases are void now rather than at expiry, and its unfinished runs are recorded as interrupted.
   */
  public int voidOrphanedLeases(long now) {
    return write(null, c -> {
      try (PreparedStatement ps = c.prepareStatement("UPDATE " + A + " SET ended_at = ?, outcome = 'interrupted',"
          + " decision = 'the process died during the run' WHERE ended_at IS NULL")) {
        ps.setLong(1, now);
        ps.executeUpdate();
      }
      try (Statement s = c.createStatement()) {
        return s.executeUpdate("UPDATE " + T + " SET lease_until = 0 WHERE state = 'PROCESSING'");
      }
    });
  }

  /** DEAD to PENDING, due now, attempts reset. False if it is not DEAD. */
  public boolean redrive(String src, String id, long now) {
    return write(List.of(src, id), c -> {
      try (PreparedStatement ps = c.prepareStatement("UPDATE " + T + " SET state = 'PENDING', attempts = 0,"
          + " first_attempt_at = NULL, last_delay_ms = 0, next_attempt_at = ?, finished_at = NULL"
          + " WHERE source = ? AND event_id = ? AND state = 'DEAD'")) {
        ps.setLong(1, now);
        ps.setString(2, src);
        ps.setString(3, id);
        return ps.executeUpdate() == 1;
      }
    });
  }

  /** Deletes DONE events finished before {@code beforeMs}, with their attempt history. */
  public int purgeDone(long beforeMs) {
    return write(null, c -> {
      try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + A + " WHERE EXISTS (SELECT 1 FROM " + T
          + " i WHERE i.source = " + A + ".source AND i.event_id = " + A + ".event_id AND i.state = 'DONE'"
          + " AND i.finished_at < ?)")) {
        ps.setLong(1, beforeMs);
        ps.executeUpdate();
      }
      try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + T + " WHERE state = 'DONE' AND finished_at < ?")) {
        ps.setLong(1, beforeMs);
        return ps.executeUpdate();
      }
    });
  }

  // ---- reads ----------------------------------------------------------------------------------

  private static final String ENTRY_COLUMNS = "source, event_id, event_type, state, attempts, runs, received_at,"
      + " next_attempt_at, finished_at, last_error";

  /**
   * The event's entry, checked against its stored checksum.
   *
   * @throws WebhookInboxException if the stored event no longer matches its checksum (changed on
   *     disk): its type or payload are not what the provider sent
   */
  public Optional<InboxEntry> find(String src, String id) {
    Optional<InboxEntry> found = read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT " + ENTRY_COLUMNS + ", body, body_sha256 FROM " + T
          + " WHERE source = ? AND event_id = ?")) {
        ps.setString(1, src);
        ps.setString(2, id);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return Optional.<InboxEntry>empty();
          }
          if (!EventChecksum.matches(rs.getBytes(12), rs.getString(1), rs.getString(2), rs.getString(3),
              rs.getBytes(11))) {
            return null;
          }
          return Optional.of(entry(rs));
        }
      }
    });
    if (found == null) {
      throw new WebhookInboxException("the webhook inbox " + name + " holds event " + src + "/" + id + " damaged: it"
          + " fails its SHA-256 checksum, so its stored type or payload changed on disk after it was accepted."
          + " It is never handed to a handler; ask the provider to resend it, or restore the inbox from a backup", null);
    }
    return found;
  }

  /** Up to {@code limit} entries in {@code state}, oldest first. */
  public List<InboxEntry> list(InboxState state, int limit) {
    return read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT " + ENTRY_COLUMNS + " FROM " + T
          + " WHERE state = ? ORDER BY received_at, source, event_id LIMIT ?")) {
        ps.setString(1, state.name());
        ps.setInt(2, limit);
        List<InboxEntry> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            out.add(entry(rs));
          }
        }
        return out;
      }
    });
  }

  public Map<InboxState, Long> counts() {
    return read(c -> {
      Map<InboxState, Long> out = new EnumMap<>(InboxState.class);
      for (InboxState s : InboxState.values()) {
        out.put(s, 0L);
      }
      try (Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT state, COUNT(*) FROM " + T + " GROUP BY state")) {
        while (rs.next()) {
          out.put(InboxState.valueOf(rs.getString(1)), rs.getLong(2));
        }
      }
      return out;
    });
  }

  /** When the oldest event not yet DONE or DEAD was received. */
  public Optional<Instant> oldestUnfinished() {
    return read(c -> {
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT MIN(received_at) FROM " + T
          + " WHERE state IN ('PENDING', 'PROCESSING')")) {
        rs.next();
        long v = rs.getLong(1);
        return rs.wasNull() ? Optional.<Instant>empty() : Optional.of(Instant.ofEpochMilli(v));
      }
    });
  }

  public List<AttemptRow> attempts(String src, String id) {
    return read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT run, owner, started_at, ended_at, outcome, error, decision"
          + " FROM " + A + " WHERE source = ? AND event_id = ? ORDER BY run")) {
        ps.setString(1, src);
        ps.setString(2, id);
        List<AttemptRow> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            long ended = rs.getLong(4);
            Long endedAt = rs.wasNull() ? null : ended;
            out.add(new AttemptRow(rs.getInt(1), rs.getString(2), rs.getLong(3), endedAt, rs.getString(5),
                rs.getString(6), rs.getString(7)));
          }
        }
        return out;
      }
    });
  }

  private static InboxEntry entry(ResultSet rs) throws SQLException {
    long finished = rs.getLong(9);
    boolean noFinish = rs.wasNull();
    return new InboxEntry(rs.getString(1), rs.getString(2), rs.getString(3), InboxState.valueOf(rs.getString(4)),
        rs.getInt(5), rs.getInt(6), Instant.ofEpochMilli(rs.getLong(7)), Instant.ofEpochMilli(rs.getLong(8)),
        noFinish ? Optional.empty() : Optional.of(Instant.ofEpochMilli(finished)), Optional.ofNullable(rs.getString(10)));
  }

  /** {@link dev.idem.webhooks.WebhookInbox#storageSize()}. */
  public long storageSize() {
    try {
      return opened.size().bytes();
    } catch (IdempotencyException e) {
      throw new WebhookInboxException("could not measure the webhook inbox " + name + ": " + e.getMessage(), e);
    }
  }

  private <R> R read(ConnectionWork<R> work) {
    try {
      return store.read(null, s -> work.run(s.connection()));
    } catch (IdempotencyException e) {
      throw new WebhookInboxException("could not read the webhook inbox " + name + ": " + e.getMessage(), e);
    }
  }

  /**
   * Runs {@code work} in the store's next commit and returns once it is durable.
   *
   * @param row the event the work touches ({@code List.of(source, eventId)}), or null for any: a
   *     read of that event waits only for its own writes to be durable
   */
  private <R> R write(Object row, ConnectionWork<R> work) {
    if (store.readOnly()) {
      throw new WebhookInboxException("the webhook inbox " + name + " is open read-only; nothing was written", null);
    }
    try {
      return store.write(Durability.SYNC, row, s -> work.run(s.connection()));
    } catch (IdempotencyException e) {
      throw new WebhookInboxException("the webhook inbox write failed: " + e.getMessage(), e);
    }
  }

  @FunctionalInterface
  private interface ConnectionWork<T> {
    T run(Connection c) throws SQLException;
  }

  static String clip(String s) {
    return s == null || s.length() <= MAX_TEXT ? s : s.substring(0, MAX_TEXT);
  }

  /** Commits what is pending, closes the connection and releases the embedded inbox's lock. Idempotent. */
  @Override
  public void close() {
    try {
      opened.close(store, Store.CLOSED);
    } catch (IdempotencyException e) {
      throw new WebhookInboxException("could not close the webhook inbox " + name + ": " + e.getMessage(), e);
    }
  }
}
