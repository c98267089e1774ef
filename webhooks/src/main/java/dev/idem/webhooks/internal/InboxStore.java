package dev.idem.webhooks.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.storage.Dialect;
import dev.idem.storage.Durability;
import dev.idem.storage.StoreOpener;
import dev.idem.storage.Schema;
import dev.idem.storage.SqlSession;
import dev.idem.storage.SqlWork;
import dev.idem.storage.StoredText;
import dev.idem.storage.Store;
import dev.idem.webhooks.AcceptResult;
import dev.idem.webhooks.InboxEntry;
import dev.idem.webhooks.InboxPage;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.WebhookInboxException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

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
  /** The signatures of deliveries answered for a known event, where the id is unsigned ({@link #insert}). */
  private static final String SIG = "idem_webhook_signatures";
  // The lengths the migrations give the free-text columns written from a run's outcome: PostgreSQL
  // refuses a longer value (SQLite would keep it), and the write recording the outcome with it. It
  // refuses a NUL too, which a handler's message quoting the payload may hold: both go through
  // StoredText. The identities (source, event id, type, owner) are refused with a NUL before they
  // get here (WebhookSource, WebhookProcessor.Builder), never changed.
  /** {@code last_error} and {@code idem_webhook_attempts.error}. */
  private static final int MAX_ERROR = 1000;
  /** {@code idem_webhook_attempts.decision}. */
  private static final int MAX_DECISION = 300;
  private static final String CLAIMED_COLUMNS = "source, event_id, event_type, body, received_at, attempts, runs,"
      + " lease_generation, first_attempt_at, last_delay_ms, body_sha256";
  // A claim takes the events whose lease expired first, oldest due first, then the PENDING and due
  // ones, oldest due first, with the limit the first range left. Each is a range of the due index
  // (state, next_attempt_at) read in index order with its own LIMIT, so that no claim sorts every
  // due event (one statement with an OR of the two states did: D log D per claim with a backlog of
  // D). Expired leases go first: they are work already started whose holder died or overran, few
  // (at most the events in flight), and usually due before anything still PENDING, since they were
  // claimed ahead of it. Taking the oldest of both ranges instead would have each range read up to
  // the limit before the claim chooses, and on PostgreSQL that read is the lock (FOR UPDATE SKIP
  // LOCKED): the rows read and not taken would stay locked until the claim's transaction ends, and
  // other instances' claims would skip them as claimed. Range after range, a claim locks only the
  // rows it takes. SQLite, with its one writer, locks nothing row by row, but takes the same order
  // so that both databases hand events out alike.
  /** PENDING and due, oldest due first. Parameters: now, limit. */
  private static final String DUE_PENDING = "SELECT source, event_id, next_attempt_at FROM " + T
      + " WHERE state = 'PENDING' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?";
  /** PROCESSING with an expired lease (its holder died or overran), oldest due first. Parameters: now, limit. */
  private static final String LEASE_EXPIRED = "SELECT source, event_id, next_attempt_at FROM " + T
      + " WHERE state = 'PROCESSING' AND lease_until < ? ORDER BY next_attempt_at LIMIT ?";
  /**
   * One event, PENDING and due by a bound: a retry whose wait the processor timed on its scheduler
   * ({@link #claimRetry}). The primary key finds it. Parameters: bound, source, event id, limit.
   */
  private static final String ONE_PENDING = "SELECT source, event_id, next_attempt_at FROM " + T
      + " WHERE state = 'PENDING' AND next_attempt_at <= ? AND source = ? AND event_id = ? ORDER BY next_attempt_at"
      + " LIMIT ?";
  /** PostgreSQL: {@link #pgClaim} of {@link #ONE_PENDING}. */
  private static final String PG_CLAIM_ONE = pgClaim(ONE_PENDING);
  /** PostgreSQL: {@link #pgClaim} of the expired leases. */
  private static final String PG_CLAIM_EXPIRED = pgClaim(LEASE_EXPIRED);
  /** PostgreSQL: {@link #pgClaim} of the PENDING and due events. */
  private static final String PG_CLAIM_PENDING = pgClaim(DUE_PENDING);

  /**
   * PostgreSQL only: claims up to N rows of {@code range} in one statement, locking them with
   * {@code FOR UPDATE SKIP LOCKED}, so that instances never wait for or take each other's rows; the
   * LIMIT applies to the rows locked, so it locks only those it claims. They come back oldest due
   * first. A claim runs one per range, in its transaction: a second range's LIMIT computed in the
   * same statement from the first's count is opaque to the planner, which then plans the update
   * for a tenth of the range (a hash join over the whole table) instead of N rows. Parameters: now,
   * limit, owner, leaseUntil, now.
   */
  private static String pgClaim(String range) {
    return "WITH c AS (" + range + " FOR UPDATE SKIP LOCKED),"
        + " u AS (UPDATE " + T + " i SET state = 'PROCESSING', attempts = i.attempts + 1, runs = i.runs + 1,"
        + " lease_owner = ?, lease_until = ?, lease_generation = i.lease_generation + 1,"
        + " first_attempt_at = COALESCE(i.first_attempt_at, ?)"
        + " FROM c WHERE i.source = c.source AND i.event_id = c.event_id"
        + " RETURNING " + CLAIMED_COLUMNS.replace("source, event_id", "i.source, i.event_id")
        + ", c.next_attempt_at AS due_at)"
        + " SELECT " + CLAIMED_COLUMNS + " FROM u ORDER BY due_at";
  }

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
   * One durable insert keyed by (source, event id); a known id or signature inserts nothing, and a
   * known id whose stored checksum differs from this delivery's is a CONFLICT, not a DUPLICATE. The
   * event is stored with its checksum ({@link EventChecksum}), checked when it is claimed or read.
   * A new event's only write is the insert, so it runs without a savepoint (issue 28).
   *
   * <p>A delivery of a known event writes in two cases only ({@link #answerKnown}): one signed
   * later than the event moves its signed time ({@link #purgeDone}), and the resend of an event
   * whose stored payload fails its checksum (the resend every message about the damage asks for;
   * its checksum equals the stored one, so it is the content the provider sent) replaces the
   * damaged payload, and an event made a dead letter for that damage is due again, answered
   * ACCEPTED.
   *
   * <p>Where the scheme does not sign the event id, the signature of a delivery answered for a
   * known event (DUPLICATE or CONFLICT) is remembered too ({@code idem_webhook_signatures}, with
   * its signed time and the event's id), and each delivery looks for its signatures among those
   * first: one indexed read more per delivery, for such a source only. A replay of a provider's
   * re-signed retry under a new id is then refused like a replay of the accepted delivery. It is
   * remembered in the same unit (transaction) that finds the id known, before any answer: written
   * later, a copy of the delivery under a new id could come in between and be accepted. Its
   * change (the signed time) is {@link #answerKnown}'s second unit: should that fail, the retry of
   * the same delivery is still that event's ({@link #seenSignature}), not a replay. A new
   * event's accept never writes it; {@link #purgeDone} removes it once its signed time is outside
   * the window, or, without one, with its event.
   *
   * <p>On PostgreSQL (READ COMMITTED) the unit of such a source first takes a transaction-scoped
   * advisory lock on (source, digest) for {@code digest} and each of {@code otherDigests}, so that two units looking up and remembering the
   * same signature run one after the other: a copy under a new id whose unit overlapped the one
   * remembering the signature read before that row was committed and was accepted as a new event.
   * It costs one more round trip per delivery of such a source (none where the id is signed, none
   * on SQLite, whose one writer runs the units one after another anyway), and deliveries carrying
   * the same signature wait for each other's commit. The lock changes nothing, so a new event's
   * accept still writes with its one INSERT.
   *
   * @param digest what is stored of the signature, unique per source ({@link SignatureDigest#of})
   * @param otherDigests what the same signed content was stored as under the other configured
   *     secrets ({@link SignatureDigest#others}): if the source holds one, the delivery is a replay
   *     and nothing is inserted. Empty, hence no extra read, for one secret or a scheme that signs
   *     its event id.
   * @param idSigned whether the scheme signs the event id ({@link Verifier#signsEventId()}): a
   *     replay then cannot carry another id, and is refused by its id
   */
  public AcceptResult insert(String src, String id, String type, byte[] digest, List<byte[]> otherDigests,
      boolean idSigned, byte[] body, Long signedAtMs, long receivedAtMs) {
    byte[] checksum = EventChecksum.of(src, id, type, body);
    String otherSql = otherDigests.isEmpty() ? null : "SELECT event_id FROM " + T + " WHERE source = ? AND"
        + " signature_digest IN (?" + ", ?".repeat(otherDigests.size() - 1) + ")";
    String answeredSql = idSigned ? null : "SELECT event_id FROM " + SIG + " WHERE source = ? AND signature_digest"
        + " IN (?" + ", ?".repeat(otherDigests.size()) + ")";
    boolean lockSignature = !idSigned && dialect == Dialect.POSTGRESQL;
    AcceptResult r = write(List.of(src, id), SqlWork.singleStatement(s -> {
      if (lockSignature) {
        // Before the first read of the signatures: a unit that remembers this signature holds the
        // lock until its commit, so this unit's reads (READ COMMITTED: each statement reads what
        // is committed when it starts) see that row, and the other way round. Without it, a copy
        // under a new id read before the retry's unit committed, and was accepted as a new event.
        for (long key : signatureLockKeys(src, digest, otherDigests)) {
          query(s, PG_SIGNATURE_LOCK, rs -> null, key);
        }
      }
      if (otherSql != null && seenSignature(s, query(s, otherSql, InboxStore::eventIds,
          digestParams(src, List.of(), otherDigests)), false, src, id, checksum, signedAtMs) == Seen.REPLAY) {
        return AcceptResult.REPLAY;
      }
      Seen remembered = answeredSql == null ? Seen.NONE : seenSignature(s, query(s, answeredSql,
          InboxStore::eventIds, digestParams(src, List.of(digest), otherDigests)), true, src, id, checksum, signedAtMs);
      if (remembered == Seen.REPLAY) {
        return AcceptResult.REPLAY;
      }
      // A remembered signature's resend is this known event's: never inserted. The KNOWN read that
      // found the event takes no lock, so on PostgreSQL (READ COMMITTED) a purge can commit since
      // and delete it; the INSERT would then accept an event already processed as a new one, its
      // signature, signed later than the event, still remembered (a replay had the purge come
      // first). A repair found under another secret's signature still tries the insert, as it did:
      // purged meanwhile, it is accepted as it would be had the purge come first, its signatures
      // gone with the event.
      boolean conflicted = remembered == Seen.NONE;
      if (conflicted && update(s, "INSERT INTO " + T + " (source, event_id, event_type, signature_digest, body,"
          + " signed_at, received_at, state, next_attempt_at, body_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, 'PENDING',"
          + " ?, ?) ON CONFLICT DO NOTHING", src, id, type, digest, body, signedAtMs, receivedAtMs, receivedAtMs,
          checksum) == 1) {
        return AcceptResult.ACCEPTED;
      }
      if (seenSignature(s, query(s, "SELECT event_id FROM " + T + " WHERE source = ? AND signature_digest = ?",
          InboxStore::eventIds, src, digest), false, src, id, checksum, signedAtMs) == Seen.REPLAY) {
        return AcceptResult.REPLAY;
      }
      // The id is known. What this delivery changes of the event, if anything, is written in a
      // unit of its own (answerKnown): this one's promise is one statement, which keeps the first
      // accept of an event without a savepoint.
      Known known = query(s, KNOWN, Known::read, src, id);
      if (known == null && !conflicted) {
        // Purged since (it was DONE): a remembered signature's resend is a replay, as it is once
        // its event is purged.
        return AcceptResult.REPLAY;
      }
      // Purged since the insert's conflict (it was DONE): a duplicate, whose signature is
      // remembered all the same. Answered without it, a copy under a new id inside its window
      // would be accepted, which neither order of the purge and this delivery gives.
      AcceptResult answer = known == null ? AcceptResult.DUPLICATE
          : known.changedBy(src, id, checksum, signedAtMs) ? null : known.answer(checksum);
      if (!idSigned) {
        // Remembered here, with the decision that the delivery is this known event's, not in
        // answerKnown's later unit: in between, a copy of it under a new id found no signature
        // and was accepted as a new event. The unit's only write that can change anything (the
        // INSERT above, if tried, changed nothing), and its last statement, so the promise holds.
        update(s, "INSERT INTO " + SIG + " (source, signature_digest, event_id, signed_at) VALUES (?, ?, ?, ?)"
            + " ON CONFLICT DO NOTHING", src, digest, id, signedAtMs);
      }
      return answer;
    }));
    return r != null ? r : answerKnown(src, id, type, body, checksum, signedAtMs, receivedAtMs);
  }

  /**
   * PostgreSQL: the lock on a (source, signature) that {@link #insert}'s unit takes first where the
   * event id is unsigned, held until the unit's transaction ends. Parameter: {@link #signatureLockKey}.
   */
  private static final String PG_SIGNATURE_LOCK = "SELECT pg_advisory_xact_lock(?)";

  /**
   * The advisory lock keys of a delivery: one per digest it is looked up by, {@code digest} and
   * {@code otherDigests}, sorted. Every one, not the first alone: during a rotation an instance that
   * still has only the old secret stores and remembers the old secret's digest, which one with both
   * secrets looks up among its others; locked by its first digest only, each took its own lock and
   * the two units overlapped as before. Sorted, so that two units taking several never wait for
   * each other in a cycle.
   */
  private static long[] signatureLockKeys(String src, byte[] digest, List<byte[]> otherDigests) {
    long[] keys = new long[1 + otherDigests.size()];
    keys[0] = signatureLockKey(src, digest);
    for (int i = 0; i < otherDigests.size(); i++) {
      keys[i + 1] = signatureLockKey(src, otherDigests.get(i));
    }
    Arrays.sort(keys);
    return keys;
  }

  /**
   * The advisory lock key of {@code digest} in {@code src}: the first 8 bytes of a SHA-256 over
   * both. Two signatures sharing a key (one chance in 2^64 for two at once) only wait for each
   * other; the database's one other advisory lock (the migrations', {@link Dialect}) is held only
   * while a migration runs.
   */
  private static long signatureLockKey(String src, byte[] digest) {
    byte[] h = Hmac.sha256(src.getBytes(StandardCharsets.UTF_8), new byte[1], digest);
    return ByteBuffer.wrap(h, 0, Long.BYTES).getLong();
  }

  /** What {@link #seenSignature} found of a delivery's signature. */
  private enum Seen {
    /** No event holds it: go on to the accept. */
    NONE,
    /** Only this very event, and the delivery is its resend: answered as a known event's delivery. */
    RESEND,
    /** A replay: answered {@link AcceptResult#REPLAY}. */
    REPLAY
  }

  /**
   * What a delivery whose signature (or its copy under another secret) the events
   * {@code holders} hold already is: none, {@link Seen#NONE}; another event, a REPLAY. Only this very
   * event, a REPLAY too (the delivery was answered before), unless the stored event fails its
   * checksum and the delivery's content is what it was accepted with: that is the resend the
   * damage's messages ask for, and where the scheme signs neither the event id nor a time (GitHub
   * signs the body alone) it carries the accepted delivery's very signature. Then
   * {@link Seen#RESEND}, for {@link #insert} to hand it to {@link #answerKnown}, which repairs the
   * event.
   *
   * <p>A signature remembered for this very event ({@code remembered}: found among those of
   * deliveries answered for a known event) is that delivery again. While it would still change
   * the event (its signed time not yet the event's, or the repair), it is answered as the known
   * event's delivery it is: insert's unit remembers it before answerKnown's unit writes that
   * change, and when the second unit fails (answered 503, "retry") the provider's retry of the very
   * same request must not be told a replay, nor the event's signed time stay behind. Once the
   * change is written, the same request again changes nothing and is a REPLAY, as before. A copy
   * under another id is a REPLAY either way, and one of an event purged since is too: {@link #insert}
   * answers such a resend from its known-event path, without trying the accept's INSERT, which a
   * purge committed since this read would let through.
   *
   * @param remembered whether {@code holders} come from {@code idem_webhook_signatures}, not the
   *     events' own signatures
   */
  private Seen seenSignature(SqlSession s, List<String> holders, boolean remembered, String src, String id,
      byte[] checksum, Long signedAtMs) throws SQLException {
    if (holders.isEmpty()) {
      return Seen.NONE;
    }
    for (String holder : holders) {
      if (!id.equals(holder)) {
        return Seen.REPLAY;
      }
    }
    Known known = query(s, KNOWN, Known::read, src, id);
    if (known == null) {
      return Seen.REPLAY;
    }
    boolean resend = remembered ? known.changedBy(src, id, checksum, signedAtMs) : known.repairedBy(src, id, checksum);
    return resend ? Seen.RESEND : Seen.REPLAY;
  }

  private static List<String> eventIds(ResultSet rs) throws SQLException {
    List<String> ids = new ArrayList<>(1);
    while (rs.next()) {
      ids.add(rs.getString(1));
    }
    return ids;
  }

  /** The parameters of a read of a source's signatures: the source, then {@code first}, then {@code more}. */
  private static Object[] digestParams(String src, List<byte[]> first, List<byte[]> more) {
    List<Object> params = new ArrayList<>(1 + first.size() + more.size());
    params.add(src);
    params.addAll(first);
    params.addAll(more);
    return params.toArray();
  }

  /**
   * How the processor's dead letter for a stored event that fails its checksum begins (its
   * {@code last_error}): {@link #answerKnown} makes such an event due again.
   */
  public static final String DAMAGED = "the stored event fails its SHA-256 checksum: its type or payload changed on"
      + " disk after it was accepted";

  /** What {@link #insert} reads of a known event: {@link Known}'s columns. Parameters: source, event id. */
  private static final String KNOWN = "SELECT body_sha256, signed_at, state, last_error, event_type, body FROM " + T
      + " WHERE source = ? AND event_id = ?";

  /** A known event as {@link #KNOWN} reads it. */
  private record Known(byte[] checksum, Long signedAtMs, String state, String lastError, String type, byte[] body) {
    static Known read(ResultSet rs) throws SQLException {
      if (!rs.next()) {
        return null;
      }
      long signed = rs.getLong(2);
      Long signedAt = rs.wasNull() ? null : signed;
      return new Known(rs.getBytes(1), signedAt, rs.getString(3), rs.getString(4), rs.getString(5), rs.getBytes(6));
    }

    /**
     * What a delivery of it with {@code checksum} is: a retry carries the same content, so the same
     * checksum (over source, id, type and payload); another one is a CONFLICT, not a duplicate to
     * answer like the first. A row from before the checksum column (null) cannot tell: a
     * DUPLICATE, as it always was.
     */
    AcceptResult answer(byte[] deliveryChecksum) {
      return checksum == null || MessageDigest.isEqual(checksum, deliveryChecksum) ? AcceptResult.DUPLICATE
          : AcceptResult.CONFLICT;
    }

    /** Whether a delivery signed at {@code signedAtMs} (null: no signed time) was signed after all it holds. */
    boolean signedEarlierThan(Long deliverySignedAtMs) {
      return deliverySignedAtMs != null && (signedAtMs == null || signedAtMs < deliverySignedAtMs);
    }

    /** Whether its stored type or payload fails its checksum, or it is a dead letter for that. */
    boolean damaged(String src, String id) {
      return !EventChecksum.matches(checksum, src, id, type, body)
          || (InboxState.DEAD.name().equals(state) && lastError != null && lastError.startsWith(DAMAGED));
    }

    /** Whether {@link #answerKnown} would change anything for this delivery. */
    boolean changedBy(String src, String id, byte[] deliveryChecksum, Long deliverySignedAtMs) {
      return signedEarlierThan(deliverySignedAtMs) || repairedBy(src, id, deliveryChecksum);
    }

    /** Whether a delivery with {@code deliveryChecksum} is the content it was accepted with, while it is damaged. */
    boolean repairedBy(String src, String id, byte[] deliveryChecksum) {
      return checksum != null && answer(deliveryChecksum) == AcceptResult.DUPLICATE && damaged(src, id);
    }
  }

  /**
   * A delivery of an event already stored, which changes it ({@link Known#changedBy}). The event
   * is read again in this write (it may have changed since the insert's read). Where the event id
   * is not signed, the delivery's signature was remembered already, by {@link #insert}'s unit.
   *
   * <p>Its signed time, if later than the event's, becomes the event's: {@link #purgeDone} keeps
   * an event until the last delivery answered for it (DUPLICATE or CONFLICT included) is outside
   * the timestamp window, since a replay of that delivery would be taken for a new event once the
   * event is purged.
   *
   * <p>A DUPLICATE of an event whose stored type or payload fails its checksum is the resend the
   * damage's messages ask for: its content is what the checksum was taken over, so it replaces the
   * damaged one, and a dead letter for the damage is due now, as a redrive makes it (attempts
   * reset, history kept). A dead letter for another reason keeps its state, now intact for a
   * redrive; a DONE event is not run again.
   *
   * @return as {@link #insert}; ACCEPTED for a repaired event that is PENDING now (due again, or
   *     waiting already)
   */
  private AcceptResult answerKnown(String src, String id, String type, byte[] body, byte[] checksum, Long signedAtMs,
      long now) {
    return write(List.of(src, id), s -> {
      Known known = query(s, KNOWN, Known::read, src, id);
      if (known == null) {
        return AcceptResult.DUPLICATE; // purged meanwhile: it was DONE
      }
      if (known.signedEarlierThan(signedAtMs)) {
        update(s, "UPDATE " + T + " SET signed_at = ? WHERE source = ? AND event_id = ?", signedAtMs, src, id);
      }
      AcceptResult answer = known.answer(checksum);
      if (answer != AcceptResult.DUPLICATE || known.checksum() == null || !known.damaged(src, id)) {
        return answer;
      }
      update(s, "UPDATE " + T + " SET event_type = ?, body = ? WHERE source = ? AND event_id = ?", type, body, src,
          id);
      if (update(s, "UPDATE " + T + " SET state = 'PENDING', attempts = 0, first_attempt_at = NULL,"
          + " last_delay_ms = 0, next_attempt_at = ?, finished_at = NULL WHERE source = ? AND event_id = ?"
          + " AND state = 'DEAD' AND last_error LIKE ?", now, src, id, DAMAGED + "%") == 1) {
        return AcceptResult.ACCEPTED;
      }
      return InboxState.PENDING.name().equals(known.state()) ? AcceptResult.ACCEPTED : AcceptResult.DUPLICATE;
    });
  }

  /** {@link #claim(int, String, long, long, long, Collection)} of what is due now, excluding nothing. */
  public List<ClaimedEvent> claim(int limit, String owner, long now, long leaseUntil) {
    return claim(limit, owner, now, now, leaseUntil, List.of());
  }

  /**
   * Claims up to {@code limit} due events: first those PROCESSING with an expired lease, then those
   * PENDING and due, each oldest due first (the comment on the ranges above says why). Each gets a
   * new lease generation, one more attempt, and a started row in the attempt history.
   *
   * @param now the time of the claim: the lease and the attempt start from it, and a lease that
   *     ended before it has expired
   * @param dueBy the PENDING events due at or before it are claimed: {@code now}, or for a caller
   *     that claims one event after another, the time it began (a retry it scheduled meanwhile is
   *     not its to run again)
   * @param exclude events never to claim, whatever their state: those the caller is running (a run
   *     that outlived its lease is still running here, and a second run beside it would take one
   *     more worker each lease, until a hung handler held them all). Bounded by the caller's
   *     workers (and the few a processDue call ran); empty for none
   * @throws IllegalArgumentException if {@code limit} is below 1, before anything is claimed
   */
  public List<ClaimedEvent> claim(int limit, String owner, long now, long dueBy, long leaseUntil,
      Collection<EventKey> exclude) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, not " + limit);
    }
    List<EventKey> excluded = List.copyOf(exclude);
    return write(null, s -> {
      List<ClaimedEvent> claimed = new ArrayList<>(
          claimRange(s, LEASE_EXPIRED, PG_CLAIM_EXPIRED, limit, owner, now, now, List.of(), leaseUntil, excluded));
      if (claimed.size() < limit) {
        claimed.addAll(claimRange(s, DUE_PENDING, PG_CLAIM_PENDING, limit - claimed.size(), owner, now, dueBy,
            List.of(), leaseUntil, excluded));
      }
      started(s, claimed, owner, now);
      return claimed;
    });
  }

  /**
   * Claims one event if it is PENDING and due by {@code dueBy}, as {@link #claim} would: a retry
   * that the processor scheduled and whose wait it timed on its scheduler, claimed when that wait
   * is over whatever the clock says (a clock that stands still never reaches a due time ahead of
   * it). The bound is the due time that processor recorded, so a retry moved later meanwhile (run
   * and failed again elsewhere) is not claimed early.
   *
   * @return the claimed event, or empty if it is not PENDING (running, finished, claimed
   *     elsewhere) or is due after {@code dueBy}
   */
  public Optional<ClaimedEvent> claimRetry(EventKey key, String owner, long now, long dueBy, long leaseUntil) {
    return write(null, s -> {
      List<ClaimedEvent> claimed = claimRange(s, ONE_PENDING, PG_CLAIM_ONE, 1, owner, now, dueBy,
          List.of(key.source(), key.eventId()), leaseUntil, List.of());
      started(s, claimed, owner, now);
      return claimed.stream().findFirst();
    });
  }

  /** A started row in the attempt history for each event just claimed. */
  private static void started(SqlSession s, List<ClaimedEvent> claimed, String owner, long now) throws SQLException {
    for (ClaimedEvent e : claimed) {
      update(s, "INSERT INTO " + A + " (source, event_id, run, owner, started_at) VALUES (?, ?, ?, ?, ?)",
          e.source(), e.eventId(), e.run(), owner, now);
    }
  }

  /**
   * Claims up to {@code limit} rows of {@code range} (up to {@code bound} in time) but the excluded
   * ones, oldest due first: on PostgreSQL with {@code pgClaim}, its claim statement (rebuilt with
   * the exclusion if there is one); on SQLite row by row.
   */
  private List<ClaimedEvent> claimRange(SqlSession s, String range, String pgClaim, int limit, String owner, long now,
      long bound, List<Object> boundParams, long leaseUntil, List<EventKey> excluded) throws SQLException {
    String r = excluding(range, excluded.size());
    // The range's parameters: its bound in time and those of its own that follow it (the key of
    // ONE_PENDING), then each excluded key, then the limit.
    List<Object> rangeParams = new ArrayList<>(2 + boundParams.size() + 2 * excluded.size());
    rangeParams.add(bound);
    rangeParams.addAll(boundParams);
    for (EventKey k : excluded) {
      rangeParams.add(k.source());
      rangeParams.add(k.eventId());
    }
    rangeParams.add(limit);
    if (dialect == Dialect.POSTGRESQL) {
      String pg = excluded.isEmpty() ? pgClaim : pgClaim(r);
      List<Object> params = new ArrayList<>(rangeParams);
      params.addAll(List.of(owner, leaseUntil, now));
      return query(s, pg, InboxStore::claimedRows, params.toArray());
    }
    List<DueRow> keys = query(s, r, InboxStore::dueRows, rangeParams.toArray());
    List<ClaimedEvent> out = new ArrayList<>(keys.size());
    for (DueRow k : keys) {
      update(s, "UPDATE " + T + " SET state = 'PROCESSING', attempts = attempts + 1, runs = runs + 1,"
          + " lease_owner = ?, lease_until = ?, lease_generation = lease_generation + 1,"
          + " first_attempt_at = COALESCE(first_attempt_at, ?) WHERE source = ? AND event_id = ?",
          owner, leaseUntil, now, k.source(), k.eventId());
      out.addAll(query(s, "SELECT " + CLAIMED_COLUMNS + " FROM " + T + " WHERE source = ? AND event_id = ?",
          InboxStore::claimedRows, k.source(), k.eventId()));
    }
    return out;
  }

  /**
   * {@code range} without {@code n} events, each bound as (source, event id) after the range's
   * time. A filter on the rows the due index yields, not a second index: n is at most the
   * processor's workers.
   */
  private static String excluding(String range, int n) {
    if (n == 0) {
      return range;
    }
    int order = range.indexOf(" ORDER BY ");
    return range.substring(0, order) + " AND NOT (" + String.join(" OR ",
        Collections.nCopies(n, "(source = ? AND event_id = ?)")) + ")" + range.substring(order);
  }

  /** A due event's key. */
  private record DueRow(String source, String eventId) {
  }

  private static List<DueRow> dueRows(ResultSet rs) throws SQLException {
    List<DueRow> out = new ArrayList<>();
    while (rs.next()) {
      out.add(new DueRow(rs.getString(1), rs.getString(2)));
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
    return finish(e, now, InboxState.DONE, now, null, null, null, "done", null);
  }

  /** A retryable failure: PENDING again at {@code nextAt}. False if the lease had moved on. */
  public boolean scheduleRetry(ClaimedEvent e, long now, long nextAt, long delayMs, String error, String decision) {
    // not finished: finished_at stays empty
    return finish(e, now, InboxState.PENDING, null, nextAt, delayMs, error, "retry", decision);
  }

  /**
   * A permanent failure or attempts spent: DEAD. False if the lease had moved on. A dead letter for
   * damage ({@code error} starting with {@link #DAMAGED}) is {@link #markDamaged}: true too if a
   * resend repaired the event since its claim and it is handed back instead.
   */
  public boolean markDead(ClaimedEvent e, long now, String error, String decision) {
    if (error != null && error.startsWith(DAMAGED)) {
      return markDamaged(e, now, error, decision) != DamagedRun.STALE;
    }
    return finish(e, now, InboxState.DEAD, now, null, null, error, "dead", decision);
  }

  /** What {@link #markDamaged} did with a run whose claimed copy of the event failed its checksum. */
  public enum DamagedRun {
    /** A dead letter for the damage. */
    DEAD,
    /** A resend repaired the stored event after the claim: PENDING again, due now, the attempt not counted. */
    HANDED_BACK,
    /** The lease had moved on: nothing changed. */
    STALE
  }

  /**
   * A run whose claimed copy of the event fails its checksum: a dead letter, but only if the stored
   * type and payload are still the ones claimed, checked in the dead letter's own UPDATE. A resend
   * that arrived during the claim ({@link #answerKnown}) replaced them with what the checksum was
   * taken over and was answered duplicate, so its sender will not send it again: the event is handed
   * back due now, uncounted, as {@link #release} does, for its next claim to run it.
   */
  public DamagedRun markDamaged(ClaimedEvent e, long now, String error, String decision) {
    return write(List.of(e.source(), e.eventId()), s -> {
      if (update(s, "UPDATE " + T + " SET state = 'DEAD', finished_at = ?, last_error = ?, lease_owner = NULL,"
          + " lease_until = NULL WHERE source = ? AND event_id = ? AND state = 'PROCESSING' AND lease_generation = ?"
          + " AND event_type = ? AND body = ?", now, StoredText.of(error, MAX_ERROR), e.source(), e.eventId(),
          e.generation(), e.eventType(), e.body()) == 1) {
        endAttempt(s, e, now, "dead", error, decision);
        return DamagedRun.DEAD;
      }
      String repaired = NOT_COUNTED + "a resend repaired the stored event after this run claimed it damaged";
      if (update(s, "UPDATE " + T + " SET state = 'PENDING', next_attempt_at = ?," + UNCOUNT
          + " lease_owner = NULL, lease_until = NULL"
          + " WHERE source = ? AND event_id = ? AND state = 'PROCESSING' AND lease_generation = ?",
          now, e.source(), e.eventId(), e.generation()) == 1) {
        endAttempt(s, e, now, "interrupted", null, repaired);
        return DamagedRun.HANDED_BACK;
      }
      endAttempt(s, e, now, "stale", error, "lease lost before completion; nothing changed");
      return DamagedRun.STALE;
    });
  }

  /** Ends the attempt row of {@code e}'s run. */
  private static void endAttempt(SqlSession s, ClaimedEvent e, long now, String outcome, String error,
      String decision) throws SQLException {
    update(s, "UPDATE " + A + " SET ended_at = ?, outcome = ?, error = ?, decision = ?"
        + " WHERE source = ? AND event_id = ? AND run = ?", now, outcome, StoredText.of(error, MAX_ERROR),
        StoredText.of(decision, MAX_DECISION), e.source(), e.eventId(), e.run());
  }

  /**
   * Records a run's outcome, if {@code e}'s lease is still the current one, and ends its attempt
   * row either way. Null {@code nextAt} and {@code delayMs} keep the stored values.
   */
  private boolean finish(ClaimedEvent e, long now, InboxState state, Long finishedAt, Long nextAt, Long delayMs,
      String error, String outcome, String decision) {
    return write(List.of(e.source(), e.eventId()), s -> {
      boolean current = update(s, "UPDATE " + T + " SET state = ?, finished_at = ?, last_error = ?,"
          + " next_attempt_at = COALESCE(?, next_attempt_at), last_delay_ms = COALESCE(?, last_delay_ms),"
          + " lease_owner = NULL, lease_until = NULL"
          + " WHERE source = ? AND event_id = ? AND state = 'PROCESSING' AND lease_generation = ?",
          state.name(), finishedAt, StoredText.of(error, MAX_ERROR), nextAt, delayMs, e.source(), e.eventId(),
          e.generation()) == 1;
      update(s, "UPDATE " + A + " SET ended_at = ?, outcome = ?, error = ?, decision = ?"
          + " WHERE source = ? AND event_id = ? AND run = ?", now, current ? outcome : "stale",
          StoredText.of(error, MAX_ERROR),
          StoredText.of(current ? decision : "lease lost before completion; nothing changed", MAX_DECISION),
          e.source(), e.eventId(), e.run());
      return current;
    });
  }

  /**
   * Extends the leases of events still running, each to {@code leaseUntil}, if it is still the
   * current one (same generation, still PROCESSING), in one write.
   *
   * @return those whose lease had moved on (another processor claimed the event after its lease
   *     lapsed, or the run already finished): their runs' outcomes will change nothing
   */
  public List<ClaimedEvent> renew(List<ClaimedEvent> running, long leaseUntil) {
    if (running.isEmpty()) {
      return List.of();
    }
    return write(null, s -> {
      List<ClaimedEvent> lost = new ArrayList<>();
      for (ClaimedEvent e : running) {
        if (update(s, "UPDATE " + T + " SET lease_until = ? WHERE source = ? AND event_id = ?"
            + " AND state = 'PROCESSING' AND lease_generation = ?", leaseUntil, e.source(), e.eventId(),
            e.generation()) != 1) {
          lost.add(e);
        }
      }
      return lost;
    });
  }

  /**
   * How the decision of a run {@link #release} handed back uncounted begins: such a run is not one
   * of the event's {@link #unrecordedRuns}.
   */
  static final String NOT_COUNTED = "not counted as an attempt: ";
  /** The decision of a run its process died during, recorded by {@link #voidOrphanedLeases}. */
  private static final String DIED = "the process died during the run";

  /**
   * A run cut short by its own processor's close, not by the event: PENDING again, due now, and the
   * attempt not counted (the first attempt's start forgotten with it). The attempt history keeps
   * the run as interrupted, its decision {@code decision} after "not counted as an attempt: ".
   * False if the lease had moved on (nothing changed).
   */
  public boolean release(ClaimedEvent e, long now, String decision) {
    // Every right-hand side reads the row as it was before this UPDATE, on both databases.
    return handBack(e, now, NOT_COUNTED + decision, UNCOUNT);
  }

  /** The SET clauses of a hand-back that does not count the run as an attempt. */
  private static final String UNCOUNT = " attempts = attempts - 1,"
      + " first_attempt_at = CASE WHEN attempts <= 1 THEN NULL ELSE first_attempt_at END,";

  /**
   * A run its processor's close cut short after it had run a long time: PENDING again, due now, but
   * the attempt counted and the first attempt's start kept, so that an event whose handler hangs
   * is one of its {@link #unrecordedRuns} each time, and does not start over in every process life.
   * The attempt history keeps the run as interrupted. False if the lease had moved on.
   */
  public boolean releaseCounted(ClaimedEvent e, long now, String decision) {
    return handBack(e, now, decision, "");
  }

  private boolean handBack(ClaimedEvent e, long now, String decision, String attemptsSet) {
    return write(List.of(e.source(), e.eventId()), s -> {
      boolean current = update(s, "UPDATE " + T + " SET state = 'PENDING', next_attempt_at = ?," + attemptsSet
          + " lease_owner = NULL, lease_until = NULL"
          + " WHERE source = ? AND event_id = ? AND state = 'PROCESSING' AND lease_generation = ?",
          now, e.source(), e.eventId(), e.generation()) == 1;
      update(s, "UPDATE " + A + " SET ended_at = ?, outcome = ?, decision = ?"
          + " WHERE source = ? AND event_id = ? AND run = ?", now, current ? "interrupted" : "stale",
          StoredText.of(current ? decision : "lease lost before completion; nothing changed", MAX_DECISION),
          e.source(), e.eventId(), e.run());
      return current;
    });
  }

  /**
   * The runs of {@code e} before its current one, since its first attempt (a re-drive starts
   * over), that recorded no outcome of their own and counted as attempts: the process died during
   * them (never ended, or recorded so at an embedded inbox's next open), they still run elsewhere
   * after their lease lapsed, or ended after it and had their outcome discarded ('stale': without
   * them a handler that outlives its lease every time ran without end, as neither bound counted
   * it), or a close cut them short after a long run ({@link #releaseCounted}). A run handed back
   * uncounted ({@link #release}) is not one of them.
   */
  public int unrecordedRuns(ClaimedEvent e) {
    return read(s -> query(s, "SELECT COUNT(*) FROM " + A + " WHERE source = ? AND event_id = ? AND run < ?"
        + " AND started_at >= ? AND (ended_at IS NULL OR outcome = 'stale' OR (outcome = 'interrupted' AND"
        + " (decision IS NULL OR decision NOT LIKE ?)))", rs -> rs.next() ? rs.getInt(1) : 0, e.source(), e.eventId(), e.run(),
        e.firstAttemptAtMs(), NOT_COUNTED + "%"));
  }

  /**
   * The runs of {@code e} before its current one, since its first attempt (a re-drive starts
   * over), that recorded a failure the retry policy judged and retried ({@code markRetry}): the
   * attempts the policy counts. Runs without an outcome of their own ({@link #unrecordedRuns}) are
   * not among them.
   */
  public int failedRuns(ClaimedEvent e) {
    return read(s -> query(s, "SELECT COUNT(*) FROM " + A + " WHERE source = ? AND event_id = ? AND run < ?"
        + " AND started_at >= ? AND outcome = 'retry'", rs -> rs.next() ? rs.getInt(1) : 0, e.source(),
        e.eventId(), e.run(), e.firstAttemptAtMs()));
  }

  /**
   * For an embedded inbox at open: the previous owner is dead (this process holds the lock), so its
   * leases are void now rather than at expiry, and its unfinished runs are recorded as interrupted.
   */
  public int voidOrphanedLeases(long now) {
    return write(null, s -> {
      update(s, "UPDATE " + A + " SET ended_at = ?, outcome = 'interrupted',"
          + " decision = ? WHERE ended_at IS NULL", now, DIED);
      return update(s, "UPDATE " + T + " SET lease_until = 0 WHERE state = 'PROCESSING'");
    });
  }

  /** DEAD to PENDING, due now, attempts reset. False if it is not DEAD. */
  public boolean redrive(String src, String id, long now) {
    if (StoredText.hasUnstorable(id)) {
      return false; // no event is stored under such an id, and PostgreSQL would refuse the parameter
    }
    return write(List.of(src, id), s -> update(s, "UPDATE " + T + " SET state = 'PENDING', attempts = 0,"
        + " first_attempt_at = NULL, last_delay_ms = 0, next_attempt_at = ?, finished_at = NULL"
        + " WHERE source = ? AND event_id = ? AND state = 'DEAD'", now, src, id) == 1);
  }

  /**
   * Deletes DONE events finished before {@code beforeMs} and, if signed with a time, signed before
   * {@code signedBeforeMs}, with their attempt history. The second bound keeps an event while a
   * replay of its delivery would still pass the timestamp window: a sender whose clock runs ahead
   * signs up to the tolerance after we finish, so the finish time alone let a purged delivery be
   * accepted again. The signed time is the latest of every delivery answered for the event, a
   * re-signed retry answered DUPLICATE (or a CONFLICT) included ({@link #answerKnown}): a replay of
   * that retry would otherwise be accepted as a new event inside its window. The remembered
   * signatures of answered deliveries ({@link #insert}) go when signed before
   * {@code signedBeforeMs} (a replay of theirs is outside the window, whatever their event's
   * state), or, without a signed time, with their event.
   */
  public int purgeDone(long beforeMs, long signedBeforeMs) {
    return write(null, s -> {
      update(s, "DELETE FROM " + A + " WHERE EXISTS (SELECT 1 FROM " + T + " i WHERE i.source = " + A + ".source"
          + " AND i.event_id = " + A + ".event_id AND i.state = 'DONE' AND i.finished_at < ?"
          + " AND (i.signed_at IS NULL OR i.signed_at < ?))", beforeMs, signedBeforeMs);
      int purged = update(s, "DELETE FROM " + T + " WHERE state = 'DONE' AND finished_at < ?"
          + " AND (signed_at IS NULL OR signed_at < ?)", beforeMs, signedBeforeMs);
      update(s, "DELETE FROM " + SIG + " WHERE signed_at < ? OR (signed_at IS NULL AND NOT EXISTS (SELECT 1 FROM "
          + T + " i WHERE i.source = " + SIG + ".source AND i.event_id = " + SIG + ".event_id))", signedBeforeMs);
      return purged;
    });
  }

  // ---- reads ----------------------------------------------------------------------------------

  /** An entry's columns, then the payload and its checksum, which every read checks. */
  private static final String ENTRY_COLUMNS = "source, event_id, event_type, state, attempts, runs, received_at,"
      + " next_attempt_at, finished_at, last_error, body, body_sha256";

  /**
   * The event's entry, checked against its stored checksum.
   *
   * @throws WebhookInboxException if the stored event no longer matches its checksum (changed on
   *     disk): its type or payload are not what the provider sent
   */
  public Optional<InboxEntry> find(String src, String id) {
    if (StoredText.hasUnstorable(id)) {
      return Optional.empty(); // as in redrive
    }
    return read(s -> query(s, "SELECT " + ENTRY_COLUMNS + " FROM " + T + " WHERE source = ? AND event_id = ?",
        this::entries, src, id).stream().findFirst());
  }

  /**
   * Up to {@code limit} entries in {@code state}, oldest first (then by source and event id), each
   * checked like {@link #find}; with {@code after}, only those after it in that order, so that a
   * listing pages by key instead of by offset. Each page walks the index on (state, received_at,
   * source, event_id) from its cursor (migration {@code listing_order}), so that it reads one page
   * instead of sorting every event of the state; the WHERE and ORDER BY must keep its columns.
   *
   * @param after the last entry of the previous page, or null for the first page
   */
  public List<InboxEntry> list(InboxState state, InboxEntry after, int limit) {
    return listing(state, after, limit, this::entries);
  }

  /**
   * As {@link #list}, but an entry that fails its checksum is marked in the page rather than
   * thrown: an operator's listing of dead letters must not be hidden by the damaged one the
   * processor made a dead letter on purpose.
   */
  public InboxPage page(InboxState state, InboxEntry after, int limit) {
    return listing(state, after, limit, rs -> {
      List<InboxEntry> events = new ArrayList<>();
      List<InboxEntry> damaged = new ArrayList<>();
      while (rs.next()) {
        InboxEntry e = entry(rs);
        events.add(e);
        if (!intact(rs, 11)) {
          damaged.add(e);
        }
      }
      return new InboxPage(events, damaged);
    });
  }

  private <R> R listing(InboxState state, InboxEntry after, int limit, Rows<R> rows) {
    if (after == null) {
      return read(s -> query(s, "SELECT " + ENTRY_COLUMNS + " FROM " + T
          + " WHERE state = ? ORDER BY received_at, source, event_id LIMIT ?", rows, state.name(), limit));
    }
    return read(s -> query(s, "SELECT " + ENTRY_COLUMNS + " FROM " + T
        + " WHERE state = ? AND (received_at, source, event_id) > (?, ?, ?)"
        + " ORDER BY received_at, source, event_id LIMIT ?", rows, state.name(),
        after.receivedAt().toEpochMilli(), after.source(), after.eventId(), limit));
  }

  /**
   * How many events are in each of {@code states}: every one of them a key, zero if none. It reads
   * no payload, and only those states' ranges of the due index (state, next_attempt_at), so that a
   * count that leaves DONE out (the gauges, the health check) never reads the finished events kept
   * for deduplication, most of a long-running inbox. It still reads every event of the states it
   * counts. A damaged event is reported when it is read ({@link #find}, {@link #list}) or claimed
   * for its handler, never served.
   */
  public Map<InboxState, Long> counts(Set<InboxState> states) {
    if (states.isEmpty()) {
      return new EnumMap<>(InboxState.class);
    }
    // The states as literals (enum names, never input): one statement per set, whose plan each
    // database makes knowing the states it reads.
    String in = EnumSet.copyOf(states).stream().map(st -> "'" + st.name() + "'").collect(Collectors.joining(", "));
    return read(s -> query(s, "SELECT state, COUNT(*) FROM " + T + " WHERE state IN (" + in + ") GROUP BY state",
        rs -> {
          Map<InboxState, Long> out = new EnumMap<>(InboxState.class);
          for (InboxState state : states) {
            out.put(state, 0L);
          }
          while (rs.next()) {
            out.put(InboxState.valueOf(rs.getString(1)), rs.getLong(2));
          }
          return out;
        }));
  }

  /**
   * When the oldest event not yet DONE or DEAD was received: the first entry of each queued state
   * in the listing index (state, received_at, ...), one row read per state however long the queue.
   * A MIN over both states at once read every queued event on PostgreSQL, which has no shortcut for
   * an IN list, and a MIN per state is read that way only when the planner estimates it cheaper.
   */
  public Optional<Instant> oldestUnfinished() {
    return read(s -> query(s, "SELECT (" + firstReceived("PENDING") + "), (" + firstReceived("PROCESSING") + ")",
        rs -> {
          rs.next();
          Optional<Instant> oldest = Optional.empty();
          for (int column = 1; column <= 2; column++) {
            long v = rs.getLong(column);
            if (!rs.wasNull() && oldest.map(o -> v < o.toEpochMilli()).orElse(true)) {
              oldest = Optional.of(Instant.ofEpochMilli(v));
            }
          }
          return oldest;
        }));
  }

  private static String firstReceived(String state) {
    return "SELECT received_at FROM " + T + " WHERE state = '" + state + "' ORDER BY received_at LIMIT 1";
  }

  public List<AttemptRow> attempts(String src, String id) {
    if (StoredText.hasUnstorable(id)) {
      return List.of(); // as in redrive
    }
    return read(s -> query(s, "SELECT run, owner, started_at, ended_at, outcome, error, decision FROM " + A
        + " WHERE source = ? AND event_id = ? ORDER BY run", rs -> {
          List<AttemptRow> out = new ArrayList<>();
          while (rs.next()) {
            long ended = rs.getLong(4);
            Long endedAt = rs.wasNull() ? null : ended;
            out.add(new AttemptRow(rs.getInt(1), rs.getString(2), rs.getLong(3), endedAt, rs.getString(5),
                rs.getString(6), rs.getString(7)));
          }
          return out;
        }, src, id));
  }

  private List<InboxEntry> entries(ResultSet rs) throws SQLException {
    List<InboxEntry> out = new ArrayList<>();
    while (rs.next()) {
      requireIntact(rs, 11);
      out.add(entry(rs));
    }
    return out;
  }

  /** The entry of the current row of {@link #ENTRY_COLUMNS}, unchecked. */
  private static InboxEntry entry(ResultSet rs) throws SQLException {
    long finished = rs.getLong(9);
    boolean noFinish = rs.wasNull();
    return new InboxEntry(rs.getString(1), rs.getString(2), rs.getString(3), InboxState.valueOf(rs.getString(4)),
        rs.getInt(5), rs.getInt(6), Instant.ofEpochMilli(rs.getLong(7)), Instant.ofEpochMilli(rs.getLong(8)),
        noFinish ? Optional.empty() : Optional.of(Instant.ofEpochMilli(finished)),
        Optional.ofNullable(rs.getString(10)));
  }

  /** {@link dev.idem.webhooks.WebhookInbox#storageSize()}. */
  public long storageSize() {
    try {
      return opened.size().bytes();
    } catch (IdempotencyException e) {
      throw new WebhookInboxException("could not measure the webhook inbox " + name + ": " + e.getMessage(), e);
    }
  }

  /**
   * Refuses a row (source, event id and type in columns 1 to 3) whose payload, in column
   * {@code body}, and checksum, in the next, disagree: it changed on disk after it was accepted.
   */
  private void requireIntact(ResultSet rs, int body) throws SQLException {
    if (!intact(rs, body)) {
      throw new WebhookInboxException("the webhook inbox " + name + " holds event " + rs.getString(1) + "/"
          + rs.getString(2) + " damaged: it fails its SHA-256 checksum, so its stored type or payload changed on disk"
          + " after it was accepted. It is never handed to a handler; ask the provider to resend it, or restore the"
          + " inbox from a backup", null);
    }
  }
  /** Whether a row (as {@link #requireIntact} reads it) matches its checksum. */
  private static boolean intact(ResultSet rs, int body) throws SQLException {
    return EventChecksum.matches(rs.getBytes(body + 1), rs.getString(1), rs.getString(2), rs.getString(3),
        rs.getBytes(body));
  }


  /** Runs {@code sql} with {@code params} (null as SQL NULL) on a statement the session may keep. */
  private static int update(SqlSession s, String sql, Object... params) throws SQLException {
    PreparedStatement ps = bind(s, sql, params);
    try {
      return ps.executeUpdate();
    } finally {
      s.release(ps);
    }
  }

  private static <R> R query(SqlSession s, String sql, Rows<R> rows, Object... params) throws SQLException {
    PreparedStatement ps = bind(s, sql, params);
    try (ResultSet rs = ps.executeQuery()) {
      return rows.read(rs);
    } finally {
      s.release(ps);
    }
  }

  private static PreparedStatement bind(SqlSession s, String sql, Object... params) throws SQLException {
    PreparedStatement ps = s.prepare(sql);
    for (int i = 0; i < params.length; i++) {
      if (params[i] == null) {
        ps.setNull(i + 1, Types.NULL);
      } else {
        ps.setObject(i + 1, params[i]);
      }
    }
    return ps;
  }

  @FunctionalInterface
  private interface Rows<R> {
    R read(ResultSet rs) throws SQLException;
  }

  private <R> R read(SqlWork<R> work) {
    try {
      return store.read(null, work);
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
  private <R> R write(Object row, SqlWork<R> work) {
    if (store.readOnly()) {
      throw new WebhookInboxException("the webhook inbox " + name + " is open read-only; nothing was written", null);
    }
    try {
      return store.write(Durability.SYNC, row, work);
    } catch (IdempotencyException e) {
      throw new WebhookInboxException("the webhook inbox write failed: " + e.getMessage(), e);
    }
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
