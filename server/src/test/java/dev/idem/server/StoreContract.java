package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.spi.StoredRecord;
import dev.idem.server.spi.StoredResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link IdempotencyStore} must do, run against each one: the state machine of seed
 * 000, its takeover rules and its fencing.
 */
abstract class StoreContract {
  static final Fingerprint A = new Fingerprint("a".repeat(64));
  static final Fingerprint B = new Fingerprint("b".repeat(64));
  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration RETENTION = Duration.ofHours(24);
  static final RecordId ID = new RecordId("alice", "POST /orders", "k1");
  static final StoredResponse CREATED =
      new StoredResponse(201, Map.of("Content-Type", List.of("application/json")), "{\"id\":1}".getBytes(), false);

  IdempotencyStore store;

  abstract IdempotencyStore open() throws Exception;

  @AfterEach
  void closeStore() {
    if (store != null) {
      store.close();
    }
  }

  IdempotencyStore store() throws Exception {
    if (store == null) {
      store = open();
    }
    return store;
  }

  ClaimAttempt claim(RecordId id, Fingerprint fp, String owner, Instant now) throws Exception {
    return store().claim(id, fp, owner, now, now.plus(LEASE), now.plus(RETENTION));
  }

  long claimed(RecordId id, Fingerprint fp, String owner, Instant now) throws Exception {
    return assertInstanceOf(ClaimAttempt.Claimed.class, claim(id, fp, owner, now)).generation();
  }

  StoredRecord existing(ClaimAttempt a) {
    return assertInstanceOf(ClaimAttempt.Existing.class, a).record();
  }

  @Test
  void firstClaimWinsThenTheRecordIsInFlight() throws Exception {
    assertEquals(1, claimed(ID, A, "o1", T0));
    StoredRecord r = existing(claim(ID, A, "o2", T0.plusSeconds(1)));
    assertEquals(RecordState.IN_FLIGHT, r.state());
    assertEquals(A, r.fingerprint());
    assertEquals(1, r.generation());
    assertEquals(A, existing(claim(ID, B, "o3", T0.plusSeconds(1))).fingerprint(), "another payload sees the record");
  }

  @Test
  void completedResultIsKeptAndNotTakenOver() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    assertTrue(store().complete(ID, g, "o1", T0.plusSeconds(1), CREATED, T0.plus(RETENTION)));
    StoredRecord r = existing(claim(ID, A, "o2", T0.plus(Duration.ofHours(2))));
    assertEquals(RecordState.COMPLETED, r.state());
    assertEquals(CREATED, r.response().orElseThrow());
    assertEquals(r, store().find(ID).orElseThrow());
    assertFalse(store().complete(ID, g, "o1", T0.plusSeconds(2), CREATED, T0.plus(RETENTION)), "completes once");
  }

  @Test
  void omittedBodiesRoundTrip() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    StoredResponse omitted = new StoredResponse(201, Map.of("Location", List.of("/orders/1")), new byte[0], true);
    assertTrue(store().complete(ID, g, "o1", T0, omitted, T0.plus(RETENTION)));
    assertEquals(omitted, store().find(ID).orElseThrow().response().orElseThrow());
  }

  @Test
  void releasedClaimIsTakenByAnyPayloadWithTheNextGeneration() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    assertTrue(store().release(ID, g, "o1"));
    assertEquals(RecordState.RELEASED, store().find(ID).orElseThrow().state());
    assertEquals(2, claimed(ID, B, "o2", T0.plusSeconds(1)));
    assertFalse(store().complete(ID, g, "o1", T0.plusSeconds(2), CREATED, T0.plus(RETENTION)),
        "the released generation is fenced out");
    assertTrue(store().complete(ID, 2, "o2", T0.plusSeconds(2), CREATED, T0.plus(RETENTION)));
  }

  @Test
  void expiredLeaseIsTakenOverBySamePayloadOnlyAndTheStaleOwnerIsFenced() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    Instant later = T0.plus(LEASE).plusMillis(1);
    StoredRecord other = existing(claim(ID, B, "o2", later));
    assertEquals(A, other.fingerprint(), "another payload does not take over a crashed claim");
    assertEquals(g + 1, claimed(ID, A, "o3", later));
    assertFalse(store().renew(ID, g, "o1", later, later.plus(LEASE)));
    assertFalse(store().complete(ID, g, "o1", later, CREATED, later.plus(RETENTION)), "stale owner refused");
    assertFalse(store().release(ID, g, "o1"));
    assertTrue(store().complete(ID, g + 1, "o3", later.plusSeconds(1), CREATED, later.plus(RETENTION)));
    assertEquals(g + 1, store().find(ID).orElseThrow().generation());
  }

  @Test
  void liveLeaseIsNotTakenOverAndRenewalKeepsItLive() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    Instant t = T0;
    for (int i = 0; i < 5; i++) {
      t = t.plusSeconds(20);
      assertTrue(store().renew(ID, g, "o1", t, t.plus(LEASE)), "renewal " + i);
      assertEquals(RecordState.IN_FLIGHT, existing(claim(ID, A, "thief", t.plusSeconds(1))).state());
    }
    assertTrue(store().complete(ID, g, "o1", t.plusSeconds(29), CREATED, t.plus(RETENTION)));
  }

  @Test
  void aLeaseThatRanOutWithNobodyTakingItOverIsStillTheClaimsToRenewAndComplete() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    Instant late = T0.plus(LEASE).plusSeconds(5);
    assertTrue(store().renew(ID, g, "o1", late, late.plus(LEASE)));
    assertEquals(RecordState.IN_FLIGHT, existing(claim(ID, A, "thief", late.plusSeconds(1))).state(), "renewed");
    Instant later = late.plus(LEASE).plusSeconds(5);
    assertTrue(store().complete(ID, g, "o1", later, CREATED, later.plus(RETENTION)));
    assertEquals(RecordState.COMPLETED, store().find(ID).orElseThrow().state());
    assertEquals(g, store().find(ID).orElseThrow().generation());
  }

  @Test
  void aTakeoverAfterTheLeaseRanOutFencesTheFirstHoldersRenewalAndCompletion() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    Instant late = T0.plus(LEASE).plusSeconds(1);
    assertInstanceOf(ClaimAttempt.Claimed.class, claim(ID, A, "o2", late));
    assertFalse(store().renew(ID, g, "o1", late, late.plus(LEASE)));
    assertFalse(store().complete(ID, g, "o1", late, CREATED, late.plus(RETENTION)));
    assertEquals(RecordState.IN_FLIGHT, store().find(ID).orElseThrow().state());
    assertEquals(g + 1, store().find(ID).orElseThrow().generation());
  }

  @Test
  void wrongOwnerWithTheRightGenerationChangesNothing() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    assertFalse(store().complete(ID, g, "intruder", T0, CREATED, T0.plus(RETENTION)));
    assertFalse(store().release(ID, g, "intruder"));
    assertFalse(store().renew(ID, g, "intruder", T0, T0.plus(LEASE)));
  }

  @Test
  void afterRetentionTheKeyIsNewAgainAndPurgeDeletesOnlyExpiredRecords() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    store().complete(ID, g, "o1", T0, CREATED, T0.plus(RETENTION));
    RecordId live = new RecordId("alice", "POST /orders", "k-live");
    claimed(live, A, "o2", T0.plus(RETENTION).minusSeconds(5));
    Instant after = T0.plus(RETENTION).plusSeconds(1);

    assertEquals(1, store().purgeExpired(after), "only the expired completed record");
    assertTrue(store().find(ID).isEmpty());
    assertTrue(store().find(live).isPresent());
    assertEquals(1, claimed(ID, B, "o3", after), "a purged key is new again, any payload");
  }

  @Test
  void expiredButNotYetPurgedRecordIsAlsoNewAgain() throws Exception {
    long g = claimed(ID, A, "o1", T0);
    store().complete(ID, g, "o1", T0, CREATED, T0.plus(RETENTION));
    assertEquals(g + 1, claimed(ID, B, "o2", T0.plus(RETENTION)));
  }

  @Test
  void scopesAreSeparateRecords() throws Exception {
    claimed(ID, A, "o1", T0);
    assertEquals(1, claimed(new RecordId("bob", "POST /orders", "k1"), A, "o2", T0));
    assertEquals(1, claimed(new RecordId("alice", "POST /refunds", "k1"), A, "o3", T0));
  }

  /**
   * An identity no database keeps as given (a NUL, which PostgreSQL refuses on every attempt; an
   * unpaired surrogate, which the drivers write as '?') is refused by every store alike, and never
   * reaches the record of another identity: on SQLite and PostgreSQL a claim by caller
   * {@code "t\uD800"} found the record of caller {@code "t?"}, another tenant's.
   */
  @Test
  void anIdentityNoDatabaseKeepsAsGivenIsRefusedAndNeverMeetsAnother() throws Exception {
    RecordId other = new RecordId("t?", "POST /orders", "k1");
    long g = claimed(other, A, "o1", T0);
    store().complete(other, g, "o1", T0, CREATED, T0.plus(RETENTION));
    List<RecordId> unstorable = List.of(new RecordId("t\uD800", "POST /orders", "k1"),
        new RecordId("t\u0000", "POST /orders", "k1"), new RecordId("alice", "POST /orders\u0000", "k1"),
        new RecordId("alice", "POST /orders", "k\uDC00"));
    for (RecordId id : unstorable) {
      assertThrows(IllegalArgumentException.class, () -> claim(id, B, "o2", T0), id::toString);
      assertTrue(store().find(id).isEmpty(), id::toString);
    }
    assertEquals(1, store().records(RecordQuery.all(), T0).records().size(), "nothing written");
    assertEquals(CREATED, store().find(other).orElseThrow().response().orElseThrow(), "the other tenant's, untouched");
  }

  @Test
  void exactlyOneOf32SimultaneousClaimsWins() throws Exception {
    IdempotencyStore s = store();
    int threads = 32;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 5; round++) {
        RecordId id = new RecordId("c", "POST /x", "race-" + round);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<ClaimAttempt>> results = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
          String owner = "o" + i;
          results.add(pool.submit(() -> {
            go.await();
            return s.claim(id, A, owner, T0, T0.plus(LEASE), T0.plus(RETENTION));
          }));
        }
        go.countDown();
        int won = 0;
        for (Future<ClaimAttempt> f : results) {
          ClaimAttempt a = f.get(20, TimeUnit.SECONDS);
          if (a instanceof ClaimAttempt.Claimed) {
            won++;
          } else {
            assertEquals(RecordState.IN_FLIGHT, existing(a).state());
          }
        }
        assertEquals(1, won, "round " + round);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void operatorsListRecordsByStateAndAgeOldestFirstInBoundedPages() throws Exception {
    RecordId done = new RecordId("alice", "POST /orders", "done");
    RecordId live = new RecordId("alice", "POST /orders", "live");
    RecordId stuck = new RecordId("bob", "POST /orders", "stuck");
    RecordId released = new RecordId("bob", "POST /refunds", "released");
    long g = claimed(done, A, "i-1/1", T0);
    store().complete(done, g, "i-1/1", T0, CREATED, T0.plus(RETENTION));
    claimed(stuck, A, "pod-0/run/2", T0.plusSeconds(1));
    long r = claimed(released, A, "i-1/3", T0.plusSeconds(2));
    store().release(released, r, "i-1/3");
    Instant now = T0.plus(LEASE).plusSeconds(10); // the stuck claim's lease has expired
    claimed(live, A, "i-1/4", now.minusSeconds(5));

    RecordPage all = store().records(RecordQuery.all(), now);
    assertEquals(List.of(done, stuck, released, live), all.records().stream().map(RecordSummary::id).toList());
    assertFalse(all.more());
    RecordSummary first = all.records().get(0);
    assertEquals(RecordState.COMPLETED, first.state());
    assertEquals(T0, first.claimedAt());
    assertEquals(java.util.OptionalInt.of(201), first.status());
    assertEquals("i-1", first.holder());

    RecordPage inFlight = store().records(RecordQuery.inFlight(), now);
    assertEquals(List.of(stuck, live), inFlight.records().stream().map(RecordSummary::id).toList());
    RecordSummary s = store().records(RecordQuery.stuck(), now).records().get(0);
    assertEquals(stuck, s.id());
    assertTrue(s.stuck(now));
    assertEquals("pod-0/run", s.holder());
    assertEquals(Duration.ofSeconds(39), s.age(now));
    assertEquals(1, store().records(RecordQuery.stuck(), now).records().size());
    assertEquals(List.of(released), store().records(RecordQuery.state(RecordState.RELEASED), now).records().stream()
        .map(RecordSummary::id).toList());
    assertEquals(List.of(stuck), store().records(RecordQuery.inFlight().olderThan(Duration.ofSeconds(30)), now)
        .records().stream().map(RecordSummary::id).toList());
    RecordPage page = store().records(RecordQuery.all().limit(2), now);
    assertEquals(2, page.records().size());
    assertTrue(page.more());

    RecordStats stats = store().stats(now);
    assertEquals(new RecordStats(2, 1, 1, 1, java.util.Optional.of(T0.plusSeconds(1)), java.util.Optional.of(T0),
        java.util.Optional.empty()), stats);
    assertEquals(Duration.ofSeconds(39), stats.oldestInFlightAge(now));
  }

  /**
   * Seed 000's retention evidence: the oldest key still honoured, and how long the oldest record
   * past retention has waited for the purge (only what the purge may delete: a live claim is kept).
   */
  @Test
  void statsTellTheOldestUnexpiredKeyAndThePurgeLag() throws Exception {
    RecordId old = new RecordId("alice", "POST /orders", "old");
    RecordId older = new RecordId("alice", "POST /orders", "older");
    RecordId young = new RecordId("alice", "POST /orders", "young");
    RecordId live = new RecordId("bob", "POST /orders", "live");
    long g = claimed(older, A, "i-1/1", T0);
    store().complete(older, g, "i-1/1", T0, CREATED, T0.plus(Duration.ofHours(1)));
    g = claimed(old, A, "i-1/2", T0.plusSeconds(60));
    store().complete(old, g, "i-1/2", T0.plusSeconds(60), CREATED, T0.plus(Duration.ofHours(2)));
    g = claimed(young, A, "i-1/3", T0.plus(Duration.ofMinutes(30)));
    store().complete(young, g, "i-1/3", T0.plus(Duration.ofMinutes(30)), CREATED, T0.plus(Duration.ofHours(5)));
    Instant now = T0.plus(Duration.ofHours(2)).plusSeconds(600);
    // Past its retention, but its lease is live: the purge keeps it, so it is no lag.
    store().claim(live, A, "i-1/4", now.minusSeconds(5), now.plus(LEASE), now.minusSeconds(1));

    RecordStats stats = store().stats(now);
    assertEquals(java.util.Optional.of(T0.plus(Duration.ofMinutes(30))), stats.oldestUnexpired());
    assertEquals(Duration.ofMinutes(100), stats.oldestUnexpiredAge(now), "young, claimed 100 minutes ago");
    assertEquals(java.util.Optional.of(T0.plus(Duration.ofHours(1))), stats.oldestPurgeable());
    assertEquals(Duration.ofMinutes(70), stats.purgeLag(now), "older expired 70 minutes ago and is still stored");

    assertEquals(2, store().purgeExpired(now));
    RecordStats after = store().stats(now);
    assertEquals(Duration.ZERO, after.purgeLag(now));
    assertEquals(java.util.Optional.empty(), after.oldestPurgeable());
  }

  @Test
  void aTakeoverIsReportedByTheClaimAndShownToOperators() throws Exception {
    claimed(ID, A, "o1", T0);
    Instant later = T0.plus(LEASE).plusMillis(1);
    ClaimAttempt.Claimed c = assertInstanceOf(ClaimAttempt.Claimed.class, claim(ID, A, "o2", later));
    assertTrue(c.tookOver());
    assertTrue(store().records(RecordQuery.all(), later).records().get(0).tookOver());
    store().release(ID, c.generation(), "o2");
    ClaimAttempt.Claimed again = assertInstanceOf(ClaimAttempt.Claimed.class, claim(ID, A, "o3", later));
    assertFalse(again.tookOver(), "a released record is claimed, not taken over");
    assertFalse(assertInstanceOf(ClaimAttempt.Claimed.class,
        claim(new RecordId("c", "POST /x", "fresh"), A, "o4", later)).tookOver());
  }

  @Test
  void theClaimsOfADeadHolderEndAtOnceAndOnlyThose() throws Exception {
    claimed(ID, A, "pod-0/run1/1", T0);
    RecordId other = new RecordId("alice", "POST /orders", "k2");
    claimed(other, A, "pod-01/run1/2", T0);
    RecordId done = new RecordId("alice", "POST /orders", "k3");
    long g = claimed(done, A, "pod-0/run1/3", T0);
    store().complete(done, g, "pod-0/run1/3", T0, CREATED, T0.plus(RETENTION));

    assertEquals(1, store().expireClaims("pod-0"), "pod-01 is another holder; a completed record has no lease");
    Instant soon = T0.plusSeconds(1);
    assertEquals(A, existing(claim(ID, B, "y", soon)).fingerprint(), "another payload is still a reuse");
    assertEquals(2, claimed(ID, A, "pod-0/run2/1", soon), "taken over at once, well within the old lease");
    assertEquals(RecordState.IN_FLIGHT, existing(claim(other, A, "x", soon)).state(), "another holder's stays live");
    assertEquals(RecordState.COMPLETED, existing(claim(done, A, "x", soon)).state());
  }
}
