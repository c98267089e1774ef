package dev.idem.testkit.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.JournalException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.StaleOwnerException;
import dev.idem.core.spi.Transition;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link Journal} implementation must have, as JUnit 5 tests: the
 * {@link Journal} contract (atomic begin, a begin with its claim, claims and leases, fencing,
 * absorbing terminal states, due order and paging, purge, delivery of outcomes one at a time and a
 * batch at a time, claims of a batch, re-drives and settlements
 * of an operation still as read) and that a journal is storage (a takeover is reported by {@link Lease#takeover()} and nothing else is recorded for it:
 * the executor applies the takeover rule), and the counts and oldest creation time per state that
 * metrics and health read. Extend it once per journal and return a fresh, empty journal for each test:
 *
 * <pre>{@code
 * class MyJournalContractTest extends JournalContract {
 *   private final MyJournal journal = MyJournal.open(...);
 *
 *   protected Journal journal() { return journal; }
 * }
 * }</pre>
 *
 * Idem runs it against {@code InMemoryJournal} and against {@code JdbcJournal} on embedded
 * SQLite, H2 and PostgreSQL. Times are fixed instants, never a clock. One test closes the journal
 * to check that it then refuses work; the subclass closes its journal after each test (closing
 * twice must be harmless). Not thread-safe: one instance per test, as JUnit makes.
 *
 * <p>The journal itself must be thread-safe, and three tests call it from 4 threads at once,
 * each thread calling it for the same 40 operations in turn, over 5 rounds: claims of PENDING
 * operations, claims of operations whose lease expired, and begins (and begins with a claim) of
 * new operations. Per operation, exactly one claim may win and exactly one begin may create; a
 * claim that reads the record and then writes it without checking again (a SELECT, then an
 * unconditional UPDATE) lets two owners hold one operation and fails them. The journal must answer
 * a lost race as it answers a claim of a held operation (empty) or a begin of a known one (not
 * created), not throw. Every wait is bounded (30 seconds); nothing sleeps.
 */
public abstract class JournalContract {
  /** The instant every scenario starts at. */
  protected static final Instant T0 = Instant.parse("2026-11-30T10:00:00.123456789Z");
  /** The lease every claim asks for. */
  protected static final Duration LEASE = Duration.ofSeconds(30);
  private static final Comparator<OperationId> ORDER = Comparator.comparing(OperationId::scope)
      .thenComparing(OperationId::operation).thenComparing(id -> id.key().value());

  // Keys from a seeded source, so that runs are reproducible.
  private final Random random = new Random(42);

  /** Creates the contract; subclasses provide the journal. */
  protected JournalContract() {}

  /**
   * The journal under test: fresh and empty for each test, the same instance within one test.
   *
   * @return the journal under test
   * @throws Exception if it cannot be opened
   */
  protected abstract Journal journal() throws Exception;

  /**
   * A journal on the same data whose purge deletes at most {@code rows} per transaction, so that a
   * test's purge spans several batches. By default {@link #journal()}: a journal that purges in one
   * step needs no override.
   *
   * @param rows the batch size the returned journal's purge uses
   * @return a journal on the same data as {@link #journal()}
   * @throws Exception if it cannot be opened
   */
  protected Journal journalPurgingInBatchesOf(int rows) throws Exception {
    return journal();
  }

  @Test
  void aTakeoverIsReportedAndRecordsNothingElse() throws Exception {
    NewOperation op = begun("{}");
    Lease first = journal().claim(op.id(), "node-a", T0, LEASE).orElseThrow();
    assertFalse(first.takeover(), "a PENDING operation is claimed, not taken over");
    OperationRecord held = journal().find(op.id()).orElseThrow();

    Lease taken = journal().claim(op.id(), "node-b", T0.plus(LEASE), LEASE).orElseThrow();
    assertTrue(taken.takeover(), "node-a's lease expired while it was IN_FLIGHT");
    OperationRecord r = journal().find(op.id()).orElseThrow();
    assertEquals(held.attempts(), r.attempts(), "the journal records no attempt for the takeover: the executor"
        + " does (dev.idem.core.spi.Takeover)");
    assertEquals(first.generation() + 1, r.generation());

    Lease own = journal().claim(op.id(), "node-b", T0.plus(LEASE).plusSeconds(1), LEASE).orElseThrow();
    assertTrue(own.takeover(), "an owner claiming its own live lease again (a restart) takes it over too");
    journal().transition(op.id(), own, Transition.retryAt(T0.plusSeconds(32), T0.plusSeconds(32), "503"));
    assertFalse(journal().claim(op.id(), "node-c", T0.plusSeconds(33), LEASE).orElseThrow().takeover(),
        "PENDING again: a plain claim");
  }

  @Test
  void beginCreatesPendingOnceAndReturnsTheSameRecordAfterwards() throws Exception {
    NewOperation op = newOp("{\"amount\":100}");
    BeginResult first = journal().begin(op);
    BeginResult second = journal().begin(op);

    assertTrue(first.created());
    assertFalse(second.created());
    assertEquals(OperationState.PENDING, first.record().state());
    assertEquals(op.id().key(), second.record().id().key());
    assertEquals(first.record(), second.record());
    assertEquals(first.record(), journal().find(op.id()).orElseThrow());
    assertEquals(op.request(), journal().find(op.id()).orElseThrow().request());
    assertEquals(0, second.record().generation());
    assertEquals(T0, second.record().createdAt());
  }

  @Test
  void beginOfAKnownKeyWithAnotherFingerprintIsRefused() throws Exception {
    NewOperation op = begun("{\"amount\":100}");
    NewOperation other = op(op.id(), null, "{\"amount\":999}");

    IdempotencyKeyReusedException e = assertThrows(IdempotencyKeyReusedException.class, () -> journal().begin(other));
    assertFalse(e.detectedByServer());
    assertEquals(op.request(), journal().find(op.id()).orElseThrow().request());
  }

  @Test
  void beginAndClaimStoresTheClaimThatBeginThenClaimWould() throws Exception {
    NewOperation op = newOp("{\"n\":1}");
    NewOperation twin = newOp("{\"n\":1}");

    BeginResult begun = journal().beginAndClaim(op, "node-a", LEASE);
    journal().begin(twin);
    Lease twinLease = journal().claim(twin.id(), "node-a", T0, LEASE).orElseThrow();

    assertTrue(begun.created());
    Lease lease = begun.claimed().orElseThrow(() -> new AssertionError("a new operation is claimed with its begin"));
    assertEquals(new Lease("node-a", 1, T0.plus(LEASE), false), lease, "a first claim at the operation's createdAt");
    assertEquals(twinLease, lease);
    OperationRecord stored = journal().find(op.id()).orElseThrow();
    OperationRecord expected = journal().find(twin.id()).orElseThrow();
    assertEquals(expected, sameIdentityAs(expected, stored), "the record a begin and a claim leave, apart from the"
        + " identity: IN_FLIGHT under the lease, owner and generation");
    assertEquals(stored, begun.record(), "returned as kept");

    assertTrue(journal().claim(op.id(), "node-b", T0.plusSeconds(29), LEASE).isEmpty(),
        "the claim excludes other owners until its lease expires");
    assertFalse(journal().findDue(T0.plusSeconds(1), null, 100).stream().anyMatch(r -> r.id().equals(op.id())),
        "not due to a resumer while the lease is live");
    journal().recordAttempt(op.id(), lease, attempt(1, 1, T0));
    Lease taken = journal().claim(op.id(), "node-b", T0.plus(LEASE), LEASE).orElseThrow();
    assertEquals(new Lease("node-b", 2, T0.plus(LEASE).plus(LEASE), true), taken, "an expired claim is taken over");
    assertThrows(StaleOwnerException.class, () -> journal().recordAttempt(op.id(), lease, attempt(2, 1, T0)),
        "the lease of the begin is fenced off like any other");
  }

  @Test
  void beginAndClaimOfAKnownOperationReturnsItAsBeginDoesUnclaimed() throws Exception {
    NewOperation op = newOp("{}");
    BeginResult first = journal().beginAndClaim(op, "node-a", LEASE);

    for (String owner : List.of("node-b", "node-a")) {
      BeginResult again = journal().beginAndClaim(op, owner, LEASE);
      assertFalse(again.created(), owner);
      assertTrue(again.claimed().isEmpty(), owner + ": an operation that existed is not claimed with the begin; the"
          + " caller claims it as for any resume");
      assertEquals(journal().begin(op), again, owner + ": as begin returns it");
      assertEquals(first.record(), journal().find(op.id()).orElseThrow(), owner + ": nothing written");
    }

    NewOperation pending = begun("{\"n\":2}");
    BeginResult p = journal().beginAndClaim(pending, "node-a", LEASE);
    assertFalse(p.created());
    assertTrue(p.claimed().isEmpty());
    OperationRecord r = journal().find(pending.id()).orElseThrow();
    assertEquals(OperationState.PENDING, r.state(), "a PENDING operation stays PENDING: not claimed");
    assertEquals(0, r.generation());
    assertEquals(p.record(), r);
  }

  @Test
  void beginAndClaimRefusesAnotherFingerprintAQueuedOperationAndANonPositiveLease() throws Exception {
    NewOperation op = newOp("{\"amount\":100}");
    journal().beginAndClaim(op, "node-a", LEASE);
    OperationRecord before = journal().find(op.id()).orElseThrow();
    NewOperation other = op(op.id(), null, "{\"amount\":999}");

    IdempotencyKeyReusedException e = assertThrows(IdempotencyKeyReusedException.class,
        () -> journal().beginAndClaim(other, "node-b", LEASE));
    assertFalse(e.detectedByServer());
    assertEquals(before, journal().find(op.id()).orElseThrow(), "nothing written");

    NewOperation queued = queued("{\"q\":1}");
    assertThrows(IllegalArgumentException.class, () -> journal().beginAndClaim(queued, "node-a", LEASE),
        "a queued operation is claimed when it is delivered");
    assertTrue(journal().find(queued.id()).isEmpty(), "refused before anything was journaled");

    NewOperation unleased = newOp("{\"l\":1}");
    for (Duration leaseFor : List.of(Duration.ZERO, Duration.ofSeconds(-1))) {
      assertThrows(IllegalArgumentException.class, () -> journal().beginAndClaim(unleased, "node-a", leaseFor),
          "lease " + leaseFor);
    }
    assertTrue(journal().find(unleased.id()).isEmpty(), "refused before anything was journaled: a PENDING record"
        + " left behind would be sent by a resume, though the call threw");
  }

  @Test
  void findOfAnUnknownIdentityIsEmpty() throws Exception {
    assertTrue(journal().find(id("nothing")).isEmpty());
  }

  @Test
  void claimTakesALeaseBumpsTheGenerationAndExcludesOthersUntilItExpires() throws Exception {
    NewOperation op = begun("{}");

    Lease a = journal().claim(op.id(), "node-a", T0, LEASE).orElseThrow();
    assertEquals(new Lease("node-a", 1, T0.plus(LEASE), false), a);
    assertTrue(journal().claim(op.id(), "node-b", T0.plusSeconds(29), LEASE).isEmpty());

    Lease b = journal().claim(op.id(), "node-b", T0.plus(LEASE), LEASE).orElseThrow();
    assertEquals(2, b.generation());
    assertTrue(b.takeover(), "the claim took an IN_FLIGHT operation over");
    OperationRecord r = journal().find(op.id()).orElseThrow();
    assertEquals(OperationState.IN_FLIGHT, r.state());
    assertEquals("node-b", r.owner());
    assertEquals(2, r.generation());
    assertEquals(b.expiresAt(), r.leaseExpiresAt());
  }

  @Test
  void concurrentClaimsOfOnePendingOperationGrantExactlyOneLease() throws Exception {
    Journal journal = journal();
    try (Race race = new Race()) {
      for (int round = 0; round < ROUNDS; round++) {
        List<NewOperation> ops = new ArrayList<>();
        for (int n = 0; n < OPS_PER_ROUND; n++) {
          ops.add(begun("{\"round\":" + round + ",\"n\":" + n + "}"));
        }
        List<List<Optional<Lease>>> byRacer = race.run(ops.size(),
            (i, n) -> journal.claim(ops.get(n).id(), "node-" + i, T0, LEASE));

        for (int n = 0; n < ops.size(); n++) {
          String what = "round " + round + ", operation " + n + ": claims of one PENDING operation at once";
          Lease won = onlyOne(column(byRacer, n), what);
          assertFalse(won.takeover(), what + ": a PENDING operation is claimed, not taken over");
          assertEquals(1, won.generation(), what);
          assertHeldBy(journal.find(ops.get(n).id()).orElseThrow(), won, what);
        }
      }
    }
  }

  @Test
  void concurrentClaimsOfAnExpiredLeaseTakeItOverExactlyOnce() throws Exception {
    Journal journal = journal();
    Instant expired = T0.plus(LEASE);
    try (Race race = new Race()) {
      for (int round = 0; round < ROUNDS; round++) {
        List<NewOperation> ops = new ArrayList<>();
        for (int n = 0; n < OPS_PER_ROUND; n++) {
          NewOperation op = begun("{\"round\":" + round + ",\"n\":" + n + "}");
          journal.claim(op.id(), "node-gone", T0, LEASE).orElseThrow();
          ops.add(op);
        }
        List<List<Optional<Lease>>> byRacer = race.run(ops.size(),
            (i, n) -> journal.claim(ops.get(n).id(), "node-" + i, expired, LEASE));

        for (int n = 0; n < ops.size(); n++) {
          String what = "round " + round + ", operation " + n + ": claims of one expired lease at once";
          Lease won = onlyOne(column(byRacer, n), what);
          assertTrue(won.takeover(), what + ": node-gone's lease expired while it was IN_FLIGHT");
          assertEquals(2, won.generation(), what);
          assertHeldBy(journal.find(ops.get(n).id()).orElseThrow(), won, what);
        }
      }
    }
  }

  @Test
  void concurrentBeginsOfOneNewOperationCreateItExactlyOnce() throws Exception {
    Journal journal = journal();
    try (Race race = new Race()) {
      for (int round = 0; round < ROUNDS; round++) {
        List<NewOperation> ops = new ArrayList<>();
        for (int n = 0; n < OPS_PER_ROUND; n++) {
          ops.add(newOp("{\"round\":" + round + ",\"n\":" + n + "}"));
        }
        // Even racers begin, odd ones begin with a claim, as a plain executor and a claiming one would.
        List<List<BeginResult>> byRacer = race.run(ops.size(), (i, n) -> i % 2 == 0 ? journal.begin(ops.get(n))
            : journal.beginAndClaim(ops.get(n), "node-" + i, LEASE));

        for (int n = 0; n < ops.size(); n++) {
          String what = "round " + round + ", operation " + n + ": begins of one new operation at once";
          List<BeginResult> results = column(byRacer, n);
          List<Integer> created = new ArrayList<>();
          for (int i = 0; i < results.size(); i++) {
            BeginResult r = results.get(i);
            assertEquals(ops.get(n).id(), r.record().id(), what);
            if (r.created()) {
              created.add(i);
            } else {
              assertTrue(r.claimed().isEmpty(), what + ": an operation that existed is not claimed with the begin");
            }
          }
          assertEquals(1, created.size(), what + ": created by racers " + created);
          BeginResult creator = results.get(created.get(0));
          OperationRecord stored = journal.find(ops.get(n).id()).orElseThrow();
          if (created.get(0) % 2 == 0) {
            assertTrue(creator.claimed().isEmpty(), what + ": a plain begin claims nothing");
            assertEquals(OperationState.PENDING, stored.state(), what);
            assertEquals(0, stored.generation(), what);
          } else {
            Lease won = creator.claimed().orElseThrow(() -> new AssertionError(what
                + ": the new operation is claimed with the begin that created it"));
            assertHeldBy(stored, won, what);
          }
        }
      }
    }
  }

  @Test
  void claimAllClaimsEveryOperationStillAsReadAndNoOther() throws Exception {
    NewOperation pending = begun("{\"n\":1}");
    NewOperation expired = begun("{\"n\":2}");
    NewOperation held = begun("{\"n\":3}");
    NewOperation changed = begun("{\"n\":4}");
    journal().claim(expired.id(), "node-gone", T0, LEASE).orElseThrow();
    journal().claim(held.id(), "node-other", T0.plusSeconds(20), LEASE).orElseThrow();
    Instant now = T0.plus(LEASE);
    List<OperationRecord> asRead = new ArrayList<>();
    for (NewOperation op : List.of(pending, expired, held, changed)) {
      asRead.add(journal().find(op.id()).orElseThrow());
    }
    // Changed after it was read: another owner claimed it meanwhile.
    journal().claim(changed.id(), "node-other", now, LEASE).orElseThrow();

    List<Optional<Lease>> leases = journal().claimAll(asRead, "node-me", now, LEASE);

    assertEquals(4, leases.size(), "one entry per operation, in order");
    assertEquals(new Lease("node-me", 1, now.plus(LEASE), false), leases.get(0).orElseThrow(),
        "a PENDING operation is claimed, not taken over");
    assertEquals(new Lease("node-me", 2, now.plus(LEASE), true), leases.get(1).orElseThrow(),
        "an IN_FLIGHT operation whose lease expired is taken over");
    assertTrue(leases.get(2).isEmpty(), "another owner's live lease is not claimed");
    assertTrue(leases.get(3).isEmpty(), "an operation another owner claimed since it was read is not claimed");
    for (int i = 0; i < 2; i++) {
      OperationRecord r = journal().find(asRead.get(i).id()).orElseThrow();
      assertEquals(OperationState.IN_FLIGHT, r.state());
      assertEquals("node-me", r.owner());
      assertEquals(leases.get(i).orElseThrow().generation(), r.generation());
      assertEquals(now.plus(LEASE), r.leaseExpiresAt());
    }
    assertEquals("node-other", journal().find(held.id()).orElseThrow().owner());
    OperationRecord other = journal().find(changed.id()).orElseThrow();
    assertEquals("node-other", other.owner());
    assertEquals(1, other.generation(), "the other owner's claim stands");
    assertTrue(journal().claimAll(List.of(), "node-me", now, LEASE).isEmpty());
  }

  /**
   * A background pass reads a due page, and another instance sends one of its operations before
   * the pass claims it, gets a 429 and queues it again until its {@code Retry-After}: the pass's
   * fenced claims ({@link Journal#claimIfUnchanged}, {@link Journal#claimAll}) leave it, as changed
   * since it was read, so it is not sent again ahead of the server's hint.
   */
  @Test
  void aFencedClaimLeavesAnOperationSentAndQueuedAgainSinceItWasRead() throws Exception {
    NewOperation op = begun("{\"n\":1}");
    OperationRecord asRead = journal().find(op.id()).orElseThrow();
    Lease other = journal().claim(op.id(), "node-other", T0, LEASE).orElseThrow();
    journal().transition(op.id(), other, Transition.retryAt(T0.plusSeconds(1), T0.plusSeconds(6), "429"));
    Instant now = T0.plusSeconds(1);

    assertTrue(journal().claimIfUnchanged(asRead, "node-me", now, LEASE).isEmpty(), "changed since it was read");
    assertTrue(journal().claimAll(List.of(asRead), "node-me", now, LEASE).get(0).isEmpty(), "changed since it was read");
    OperationRecord r = journal().find(op.id()).orElseThrow();
    assertEquals(OperationState.PENDING, r.state());
    assertEquals(T0.plusSeconds(6), r.nextAttemptAt(), "its due time stands");
    assertEquals(other.generation(), r.generation());
    assertTrue(journal().claimIfUnchanged(r, "node-me", now, LEASE).isPresent(), "as read now, it is claimed");
  }

  /**
   * Every way to claim takes the lease the caller asks for, not one of the journal's choosing: the
   * executor sizes its lease to its longest attempt, and a shorter lease would let another instance
   * take the operation over while the first is still sending it. Every other test asks for
   * {@link #LEASE}, so this one asks for another.
   */
  @Test
  void everyClaimTakesTheLeaseAskedFor() throws Exception {
    Duration asked = Duration.ofMinutes(7);
    NewOperation claimed = begun("{}");
    NewOperation waited = begun("{}");
    NewOperation batched = begun("{}");
    NewOperation inline = newOp("{}");

    assertEquals(T0.plus(asked), journal().claim(claimed.id(), "node-a", T0, asked).orElseThrow().expiresAt(),
        "claim");
    assertEquals(T0.plus(asked), journal().claimWaiting(waited.id(), "node-a", T0, asked).orElseThrow().expiresAt(),
        "claimWaiting");
    OperationRecord asRead = journal().find(batched.id()).orElseThrow();
    assertEquals(T0.plus(asked), journal().claimAll(List.of(asRead), "node-a", T0, asked).get(0).orElseThrow()
        .expiresAt(), "claimAll");
    assertEquals(T0.plus(asked), journal().beginAndClaim(inline, "node-a", asked).claimed().orElseThrow().expiresAt(),
        "beginAndClaim, at the operation's createdAt");
    for (NewOperation op : List.of(claimed, waited, batched, inline)) {
      assertEquals(T0.plus(asked), journal().find(op.id()).orElseThrow().leaseExpiresAt(), "the stored lease");
    }
    assertTrue(journal().claim(claimed.id(), "node-b", T0.plus(asked).minusNanos(1), LEASE).isEmpty(),
        "the lease asked for is live until it expires");
  }

  /**
   * {@code claimWaiting} (the claim of an operation an app's call named) claims as {@code claim}
   * does when nothing else holds the operation: a lease for a free one, none under another owner's
   * live lease (it may wait briefly for a process holding the row, never for a lease).
   */
  @Test
  void claimWaitingClaimsAsClaimDoes() throws Exception {
    NewOperation op = begun("{}");
    Lease lease = journal().claimWaiting(op.id(), "node-a", T0, LEASE).orElseThrow();
    assertEquals(1, lease.generation());
    assertFalse(lease.takeover());
    assertEquals(OperationState.IN_FLIGHT, journal().find(op.id()).orElseThrow().state());
    assertTrue(journal().claimWaiting(op.id(), "node-b", T0.plusSeconds(1), LEASE).isEmpty(),
        "another owner's live lease is not waited out");
    assertThrows(IllegalStateException.class, () -> journal().claimWaiting(id("x"), "n", T0, LEASE));
  }

  @Test
  void claimOfAnUnknownOperationIsAnError() {
    assertThrows(IllegalStateException.class, () -> journal().claim(id("x"), "n", T0, LEASE));
  }

  @Test
  void attemptsAreAppendedInOrderUnderTheCurrentLease() throws Exception {
    NewOperation op = begun("{}");
    Lease lease = journal().claim(op.id(), "n", T0, LEASE).orElseThrow();

    journal().recordAttempt(op.id(), lease, attempt(1, 1, T0));
    journal().recordAttempt(op.id(), lease, attempt(2, 1, T0.plusSeconds(1)));

    OperationRecord r = journal().find(op.id()).orElseThrow();
    assertEquals(List.of(attempt(1, 1, T0), attempt(2, 1, T0.plusSeconds(1))), r.attempts());
    assertTrue(r.hasAmbiguousAttempt());
    assertEquals(T0.plusSeconds(1).plusMillis(5), r.updatedAt());
  }

  @Test
  void aStaleOwnerChangesNothing() throws Exception {
    NewOperation op = begun("{}");
    Lease old = journal().claim(op.id(), "node-a", T0, LEASE).orElseThrow();
    Lease current = journal().claim(op.id(), "node-b", T0.plus(LEASE), LEASE).orElseThrow();
    OperationRecord before = journal().find(op.id()).orElseThrow();

    assertThrows(StaleOwnerException.class, () -> journal().recordAttempt(op.id(), old, attempt(1, 1, T0)));
    assertThrows(StaleOwnerException.class, () -> journal().transition(op.id(), old,
        Transition.finish(OperationState.SUCCEEDED, T0.plusSeconds(31), ok("{}"), null)));
    Lease sameGenerationOtherOwner = new Lease("node-a", current.generation(), current.expiresAt(), false);
    assertThrows(StaleOwnerException.class, () -> journal().transition(op.id(), sameGenerationOtherOwner,
        Transition.finish(OperationState.FAILED, T0.plusSeconds(31), null, "x")));

    assertEquals(before, journal().find(op.id()).orElseThrow());
  }

  @Test
  void successKeepsTheResponseAndIsAbsorbing() throws Exception {
    NewOperation op = begun("{}");
    Lease lease = journal().claim(op.id(), "n", T0, LEASE).orElseThrow();
    journal().recordAttempt(op.id(), lease, attempt(1, 1, T0));

    OperationRecord done = journal().transition(op.id(), lease,
        Transition.finish(OperationState.SUCCEEDED, T0.plusSeconds(1), ok("{\"id\":7}"), null));

    assertEquals(done, journal().find(op.id()).orElseThrow());
    assertEquals(OperationState.SUCCEEDED, done.state());
    assertEquals(ok("{\"id\":7}"), done.response());
    assertNull(done.leaseExpiresAt());
    assertEquals(1, done.attempts().size());
    assertTrue(journal().claim(op.id(), "other", T0.plusSeconds(3600), LEASE).isEmpty());
    assertThrows(StaleOwnerException.class, () -> journal().transition(op.id(), lease,
        Transition.finish(OperationState.FAILED, T0.plusSeconds(2), null, "late")));
    assertThrows(IllegalStateException.class, () -> journal().redrive(op.id(), T0.plusSeconds(3)));
  }

  @Test
  void anAttemptAndItsTransitionAreWrittenTogetherAsTheTwoCallsWould() throws Exception {
    NewOperation op = begun("{}");
    NewOperation twoCalls = begun("{}");
    Lease first = journal().claim(op.id(), "n", T0, LEASE).orElseThrow();
    Lease firstOfTwo = journal().claim(twoCalls.id(), "n", T0, LEASE).orElseThrow();
    Instant next = T0.plusSeconds(10);

    journal().recordAttemptAndTransition(op.id(), first, attempt(1, 1, T0),
        Transition.retryAt(T0.plusSeconds(1), next, "503"));
    journal().recordAttempt(twoCalls.id(), firstOfTwo, attempt(1, 1, T0));
    journal().transition(twoCalls.id(), firstOfTwo, Transition.retryAt(T0.plusSeconds(1), next, "503"));

    OperationRecord retrying = journal().find(op.id()).orElseThrow();
    assertEquals(OperationState.PENDING, retrying.state());
    assertEquals(List.of(attempt(1, 1, T0)), retrying.attempts());
    assertEquals(next, retrying.nextAttemptAt());
    assertEquals(journal().find(twoCalls.id()).orElseThrow().attempts(), retrying.attempts());
    assertEquals(List.of(retrying), journal().findDue(next, null, 10).stream()
        .filter(r -> r.id().equals(op.id())).toList());

    Lease second = journal().claim(op.id(), "n", next, LEASE).orElseThrow();
    journal().recordAttemptAndTransition(op.id(), second, attempt(2, 2, next),
        Transition.finish(OperationState.SUCCEEDED, next.plusSeconds(1), ok("{\"id\":7}"), null));

    OperationRecord done = journal().find(op.id()).orElseThrow();
    assertEquals(OperationState.SUCCEEDED, done.state());
    assertEquals(List.of(attempt(1, 1, T0), attempt(2, 2, next)), done.attempts());
    assertEquals(ok("{\"id\":7}"), done.response());
    assertNull(done.leaseExpiresAt());
    assertNull(done.nextAttemptAt());
    assertEquals(next.plusSeconds(1), done.updatedAt());
    assertTrue(journal().claim(op.id(), "other", T0.plusSeconds(3600), LEASE).isEmpty());
  }

  @Test
  void aStaleOwnersAttemptAndTransitionChangeNothing() throws Exception {
    NewOperation op = begun("{}");
    Lease old = journal().claim(op.id(), "node-a", T0, LEASE).orElseThrow();
    Lease current = journal().claim(op.id(), "node-b", T0.plus(LEASE), LEASE).orElseThrow();
    OperationRecord before = journal().find(op.id()).orElseThrow();

    assertThrows(StaleOwnerException.class, () -> journal().recordAttemptAndTransition(op.id(), old,
        attempt(1, 1, T0), Transition.finish(OperationState.SUCCEEDED, T0.plusSeconds(31), ok("{}"), null)));
    Lease sameGenerationOtherOwner = new Lease("node-a", current.generation(), current.expiresAt(), false);
    assertThrows(StaleOwnerException.class, () -> journal().recordAttemptAndTransition(op.id(),
        sameGenerationOtherOwner, attempt(2, 2, T0.plusSeconds(31)),
        Transition.finish(OperationState.FAILED, T0.plusSeconds(31), null, "x")));

    assertEquals(before, journal().find(op.id()).orElseThrow());
  }

  @Test
  void aScheduledRetryIsDueAtItsTime() throws Exception {
    NewOperation op = begun("{}");
    Lease lease = journal().claim(op.id(), "n", T0, LEASE).orElseThrow();
    Instant next = T0.plusSeconds(10);

    OperationRecord r = journal().transition(op.id(), lease, Transition.retryAt(T0.plusSeconds(1), next, "503"));

    assertEquals(OperationState.PENDING, r.state());
    assertEquals(next, r.nextAttemptAt());
    assertEquals("503", r.reason());
    assertEquals(r, journal().find(op.id()).orElseThrow());
    assertTrue(journal().findDue(next.minusNanos(1), null, 10).isEmpty());
    assertEquals(List.of(r), journal().findDue(next, null, 10));
    Lease again = journal().claim(op.id(), "n", next, LEASE).orElseThrow();
    assertEquals(2, again.generation());
  }

  @Test
  void abandonMovesOnlyPendingOperations() throws Exception {
    NewOperation op = begun("{}");
    OperationRecord r = journal().abandon(op.id(),
        Transition.finish(OperationState.UNCERTAIN, T0.plusSeconds(5), null, "past key retention"));
    assertEquals(OperationState.UNCERTAIN, r.state());
    assertEquals("past key retention", r.reason());
    assertEquals(r, journal().find(op.id()).orElseThrow());

    NewOperation claimed = begun("{}");
    journal().claim(claimed.id(), "n", T0, LEASE).orElseThrow();
    assertThrows(IllegalStateException.class, () -> journal().abandon(claimed.id(),
        Transition.finish(OperationState.FAILED, T0, null, "x")));
    NewOperation pending = begun("{}");
    assertThrows(IllegalStateException.class, () -> journal().abandon(pending.id(),
        Transition.finish(OperationState.SUCCEEDED, T0, ok("{}"), null)));
    assertEquals(OperationState.PENDING, journal().find(pending.id()).orElseThrow().state());
  }

  @Test
  void redriveReturnsFailedOrUncertainToPendingWithTheSameKey() throws Exception {
    NewOperation op = begun("{}");
    Lease lease = journal().claim(op.id(), "n", T0, LEASE).orElseThrow();
    journal().transition(op.id(), lease, Transition.finish(OperationState.UNCERTAIN, T0.plusSeconds(1), null, "timeout"));

    OperationRecord r = journal().redrive(op.id(), T0.plusSeconds(60));

    assertEquals(OperationState.PENDING, r.state());
    assertEquals(op.id(), r.id());
    assertEquals("re-driven from UNCERTAIN", r.reason());
    assertEquals(r, journal().find(op.id()).orElseThrow());
    assertEquals(T0.plusSeconds(60), r.createdAt(), "no attempt may have reached the server: begun anew at the"
        + " re-drive, the age limit counts from it");
    assertEquals(T0.plusSeconds(60), r.updatedAt());
    assertEquals(List.of(r), journal().findDue(T0.plusSeconds(60), null, 5));
    assertEquals(2, journal().claim(op.id(), "n", T0.plusSeconds(61), LEASE).orElseThrow().generation());
    assertThrows(IllegalStateException.class, () -> journal().redrive(op.id(), T0.plusSeconds(62)));
  }

  @Test
  void redriveMovesCreatedAtOnlyWhenNoAttemptMayHaveReachedTheServer() throws Exception {
    // Only attempts certainly not sent (connection refused): begun anew at the re-drive.
    NewOperation refused = begun("{\"r\":1}");
    Lease lease = journal().claim(refused.id(), "n", T0, LEASE).orElseThrow();
    AttemptRecord notSent = new AttemptRecord(1, lease.generation(), T0, T0.plusMillis(5), Classification.SAFE, null,
        "java.net.ConnectException", "connection refused", Duration.ZERO, "give up");
    journal().recordAttemptAndTransition(refused.id(), lease, notSent,
        Transition.finish(OperationState.FAILED, T0.plusSeconds(1), null, "refused"));
    OperationRecord anew = journal().redrive(refused.id(), T0.plusSeconds(60));
    assertEquals(T0.plusSeconds(60), anew.createdAt(), "never sent: the age limit counts from the re-drive");
    assertEquals(anew, journal().find(refused.id()).orElseThrow());

    // An attempt that may have reached the server: createdAt kept, by redrive and redriveIfUnchanged,
    // so that the age limit keeps bounding the time since it (the server's key retention).
    OperationRecord ambiguous = uncertainWithAnAttempt(false);
    OperationRecord kept = journal().redrive(ambiguous.id(), T0.plusSeconds(60));
    assertEquals(ambiguous.createdAt(), kept.createdAt(), "an attempt may have reached the server: creation kept");
    assertEquals(T0.plusSeconds(60), kept.updatedAt());
    assertEquals(kept, journal().find(ambiguous.id()).orElseThrow());

    OperationRecord listed = uncertainWithAnAttempt(true);
    OperationRecord keptToo = journal().redriveIfUnchanged(listed, T0.plusSeconds(60)).orElseThrow();
    assertEquals(listed.createdAt(), keptToo.createdAt(), "redriveIfUnchanged re-drives as redrive does");
    assertEquals(keptToo, journal().find(listed.id()).orElseThrow());
  }

  @Test
  void findDuePagesThroughEveryDueOperationOnceInIdentityOrder() throws Exception {
    List<OperationId> due = new ArrayList<>();
    for (int i = 0; i < 23; i++) {
      NewOperation op = op(new OperationId(i % 2 == 0 ? "tenant-a" : "tenant-b", "op-" + (i % 3), key()), null, "{}");
      journal().begin(op);
      due.add(op.id());
    }
    NewOperation expired = begun("{}");
    journal().claim(expired.id(), "dead-node", T0.minusSeconds(60), LEASE).orElseThrow();
    due.add(expired.id());
    NewOperation leased = begun("{}");
    journal().claim(leased.id(), "live-node", T0, LEASE).orElseThrow();
    abandoned(OperationState.FAILED, T0);
    due.sort(ORDER);

    assertEquals(due, pages(10, (after, size) -> journal().findDue(T0, idOf(after), size)));
  }

  /** A PENDING operation begun at {@code createdAt}, due then (it has no next attempt time). */
  private NewOperation begunAt(Instant createdAt) throws Exception {
    NewOperation op = newOp("{}");
    op = new NewOperation(op.id(), null, op.fingerprint(), op.request(), createdAt);
    journal().begin(op);
    return op;
  }

  @Test
  void findDueForAnOwnerGivesItsOwnLeasesFirstThenTheRestOldestDueFirst() throws Exception {
    Instant now = T0.plusSeconds(100);
    // Held under pod-0's own live leases (an earlier incarnation's, after a restart): first, by identity.
    List<OperationId> own = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      NewOperation op = begunAt(T0);
      journal().claim(op.id(), "pod-0", now.minusSeconds(1), LEASE).orElseThrow();
      own.add(op.id());
    }
    own.sort(ORDER);
    // Then by when each became due, whatever the identities.
    NewOperation expiredLease = begunAt(T0);  // another owner's lease, expired at now - 20 s
    journal().claim(expiredLease.id(), "pod-1", now.minusSeconds(50), LEASE).orElseThrow();
    NewOperation retried = begunAt(T0);  // due again at now - 30 s
    Lease l = journal().claim(retried.id(), "pod-1", T0, LEASE).orElseThrow();
    journal().transition(retried.id(), l, Transition.retryAt(T0.plusSeconds(1), now.minusSeconds(30), "503"));
    NewOperation newest = begunAt(now.minusSeconds(5));
    NewOperation oldest = begunAt(T0.plusSeconds(10));
    NewOperation middle = begunAt(now.minusSeconds(25));
    // Not due for pod-0: another owner's live lease, a retry not yet due, a finished operation.
    NewOperation foreign = begunAt(T0);
    journal().claim(foreign.id(), "pod-1", now.minusSeconds(1), LEASE).orElseThrow();
    NewOperation later = begunAt(T0);
    Lease l2 = journal().claim(later.id(), "pod-1", T0, LEASE).orElseThrow();
    journal().transition(later.id(), l2, Transition.retryAt(T0.plusSeconds(1), now.plusSeconds(1), "503"));
    abandoned(OperationState.FAILED, T0);

    List<OperationId> expected = new ArrayList<>(own);
    expected.addAll(List.of(oldest.id(), retried.id(), middle.id(), expiredLease.id(), newest.id()));
    for (int size : new int[] {1, 2, 3, 100}) {
      assertEquals(expected, pages(size, (after, n) -> journal().findDue(now, "pod-0", after, n)), "pages of " + size);
    }
    // For pod-1 the same rows but pod-0's live leases, and its own live lease first.
    List<OperationId> forPod1 = new ArrayList<>(List.of(foreign.id()));
    forPod1.addAll(expected.subList(own.size(), expected.size()));
    assertEquals(forPod1, pages(2, (after, n) -> journal().findDue(now, "pod-1", after, n)));
    // The rule of claim: an own lease is claimable, as the query says.
    assertTrue(journal().claim(own.get(0), "pod-0", now, LEASE).isPresent());
    assertTrue(journal().claim(foreign.id(), "pod-0", now, LEASE).isEmpty());
  }

  @Test
  void findDueOfNamesGivesThoseNamesOnlyInTheSameOrderAndPages() throws Exception {
    Instant now = T0.plusSeconds(100);
    // A backlog of another name, older than anything of ours, and ours among it; own leases too.
    for (int i = 0; i < 7; i++) {
      NewOperation refund = op(id("refund"), null, "{}");
      refund = new NewOperation(refund.id(), null, refund.fingerprint(), refund.request(), T0.plusSeconds(i));
      journal().begin(refund);
      if (i == 3) {
        journal().claim(refund.id(), "pod-0", now.minusSeconds(1), LEASE).orElseThrow();
      }
    }
    NewOperation ownOrder = begunAt(T0);
    journal().claim(ownOrder.id(), "pod-0", now.minusSeconds(1), LEASE).orElseThrow();
    for (int i = 0; i < 4; i++) {
      begunAt(T0.plusSeconds(5 + 10 * i));
    }
    List<OperationId> all = pages(100, (after, n) -> journal().findDue(now, "pod-0", after, n));
    List<OperationId> orders = all.stream().filter(id -> id.operation().equals("create-order")).toList();
    assertEquals(5, orders.size(), "all: " + all);
    assertEquals(ownOrder.id(), orders.get(0), "own leases first");

    for (int size : new int[] {1, 2, 3, 100}) {
      assertEquals(orders, pages(size, (after, n) -> journal().findDue(now, "pod-0", Set.of("create-order"), after, n)),
          "pages of " + size);
    }
    assertEquals(all, pages(2, (after, n) -> journal().findDue(now, "pod-0", Set.of("create-order", "refund"), after, n)));
    assertEquals(List.of(), journal().findDue(now, "pod-0", Set.of("no-such-name"), null, 10));
  }

  @Test
  void findByStateOfNamesGivesThoseNamesOnlyInTheSameOrderAndPages() throws Exception {
    // Two scopes, so that the names asked for interleave with the others in identity order; runs
    // of other names longer than a page between them.
    for (String scope : List.of("tenant-a", "tenant-b")) {
      for (String name : List.of("a-refund", "create-order", "refund", "ship")) {
        int n = name.equals("a-refund") || name.equals("refund") ? 7 : 3;
        for (int i = 0; i < n; i++) {
          NewOperation op = op(new OperationId(scope, name, key()), null, "{}");
          journal().begin(op);
          if (i % 2 == 1) {
            journal().claim(op.id(), "pod-0", T0, LEASE).orElseThrow();
          }
        }
      }
    }
    abandoned(OperationState.FAILED, T0);  // a create-order, in neither state read
    Set<String> names = Set.of("create-order", "ship", "no-such-name");

    for (OperationState state : List.of(OperationState.PENDING, OperationState.IN_FLIGHT)) {
      List<OperationId> all = pages(100, (after, n) -> journal().findByState(state, idOf(after), n));
      List<OperationId> ours = all.stream().filter(id -> names.contains(id.operation())).toList();
      assertEquals(state == OperationState.PENDING ? 8 : 4, ours.size(), state + ", all: " + all);
      for (int size : new int[] {1, 2, 3, 100}) {
        assertEquals(ours, pages(size, (after, n) -> journal().findByState(state, names, idOf(after), n)),
            state + " in pages of " + size);
      }
      assertEquals(all, pages(2, (after, n) -> journal().findByState(state,
          Set.of("a-refund", "create-order", "refund", "ship"), idOf(after), n)), state + ", every name");
      assertEquals(List.of(), journal().findByState(state, Set.of("no-such-name"), null, 10));
    }
    assertEquals(List.of(), journal().findByState(OperationState.SUCCEEDED, Set.of("create-order"), null, 10));
    assertThrows(IllegalArgumentException.class,
        () -> journal().findByState(OperationState.PENDING, Set.of(), null, 10));
  }

  @Test
  void aPassThatTakesItsOperationsAsItGoesMeetsEachOnce() throws Exception {
    Instant now = T0.plusSeconds(100);
    List<OperationId> all = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      NewOperation op = begunAt(T0);
      journal().claim(op.id(), "pod-0", now.minusSeconds(1), LEASE).orElseThrow();
      all.add(op.id());
    }
    for (int i = 0; i < 5; i++) {
      all.add(begunAt(T0.plusSeconds(i)).id());
    }

    // Each operation is claimed as soon as its page is read (as resumePending does): the own
    // leases' expiry moves, and the PENDING ones become own leases; neither comes round again.
    List<OperationId> seen = pages(2, (after, size) -> {
      List<OperationRecord> page = journal().findDue(now, "pod-0", after, size);
      for (OperationRecord r : page) {
        journal().claim(r.id(), "pod-0", now, LEASE).orElseThrow();
      }
      return page;
    });

    assertEquals(all.size(), seen.size(), "each once: " + seen);
    assertEquals(new java.util.HashSet<>(all), new java.util.HashSet<>(seen));
  }

  @Test
  void findByStatePagesInIdentityOrder() throws Exception {
    List<OperationId> pending = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      pending.add(begun("{}").id());
    }
    NewOperation failed = abandoned(OperationState.FAILED, T0);
    pending.sort(ORDER);

    // A page may be short while more follow (only an empty page is the last): paged on to the end.
    assertEquals(pending, pages(4, (after, size) -> journal().findByState(OperationState.PENDING, idOf(after), size)));
    assertFalse(journal().findByState(OperationState.PENDING, null, 4).isEmpty(), "a first page while any are there");
    assertEquals(List.of(failed.id()),
        journal().findByState(OperationState.FAILED, null, 10).stream().map(OperationRecord::id).toList());
    assertThrows(IllegalArgumentException.class, () -> journal().findByState(OperationState.FAILED, null, 0));
  }

  /**
   * {@link Journal#count} and {@link Journal#oldestCreatedAt} feed the pending-queue gauges and the
   * health indicator; the SPI asks a journal to answer each with one query, so each is checked here
   * against what its default, paging through {@link Journal#findByState}, would answer.
   */
  @Test
  void countAndOldestCreatedAtSeeOnlyTheOperationsInTheirState() throws Exception {
    begunAt(T0.plusSeconds(10));
    begunAt(T0.plusSeconds(5));
    begunAt(T0.plusSeconds(20));
    NewOperation claimed = begunAt(T0.plusSeconds(1));
    assertTrue(journal().claim(claimed.id(), "owner-a", T0.plusSeconds(30), LEASE).isPresent());
    abandoned(OperationState.FAILED, T0.plusSeconds(40));   // created at T0, the oldest of all

    assertEquals(3, journal().count(OperationState.PENDING));
    assertEquals(1, journal().count(OperationState.IN_FLIGHT));
    assertEquals(1, journal().count(OperationState.FAILED));
    assertEquals(0, journal().count(OperationState.SUCCEEDED));
    assertEquals(Optional.of(T0.plusSeconds(5)), journal().oldestCreatedAt(OperationState.PENDING),
        "the oldest PENDING operation, not the newest nor the oldest of another state");
    assertEquals(Optional.of(T0.plusSeconds(1)), journal().oldestCreatedAt(OperationState.IN_FLIGHT));
    assertEquals(Optional.of(T0), journal().oldestCreatedAt(OperationState.FAILED));
    assertEquals(Optional.empty(), journal().oldestCreatedAt(OperationState.SUCCEEDED));
  }

  @Test
  void findByReferenceListsTheScopesOperationsOldestFirst() throws Exception {
    NewOperation newer = new NewOperation(id("pay"), "cart-9", op(id("x"), null, "{}").fingerprint(),
        request("{}"), T0.plusSeconds(5));
    NewOperation older = new NewOperation(id("pay"), "cart-9", newer.fingerprint(), request("{}"), T0);
    journal().begin(newer);
    journal().begin(older);
    journal().begin(newOp("{}"));

    assertEquals(List.of(older.id(), newer.id()),
        journal().findByReference("tenant-a", "cart-9").stream().map(OperationRecord::id).toList());
    assertTrue(journal().findByReference("tenant-b", "cart-9").isEmpty());
  }

  @Test
  void purgeDeletesOnlyTerminalOperationsLastUpdatedBeforeTheCutoff() throws Exception {
    NewOperation oldDone = abandoned(OperationState.FAILED, T0.plusSeconds(1));
    NewOperation newDone = abandoned(OperationState.UNCERTAIN, T0.plusSeconds(100));
    NewOperation oldPending = begun("{}");

    assertEquals(1, journal().purge(T0.plusSeconds(50)));

    assertTrue(journal().find(oldDone.id()).isEmpty());
    assertTrue(journal().find(newDone.id()).isPresent());
    assertTrue(journal().find(oldPending.id()).isPresent());
  }

  @Test
  void purgeKeepsAnOperationUpdatedExactlyAtTheCutoff() throws Exception {
    NewOperation done = abandoned(OperationState.FAILED, T0.plusSeconds(50));

    assertEquals(0, journal().purge(T0.plusSeconds(50)), "strictly before the cutoff: not at it");
    assertTrue(journal().find(done.id()).isPresent());
    assertEquals(1, journal().purge(T0.plusSeconds(50).plusNanos(1)));
    assertTrue(journal().find(done.id()).isEmpty());
  }

  @Test
  void aPurgeLongerThanOneBatchDeletesEveryMatchingRowAndNoOther() throws Exception {
    List<NewOperation> old = new ArrayList<>();
    for (int i = 0; i < 23; i++) {
      old.add(abandoned(i % 2 == 0 ? OperationState.FAILED : OperationState.UNCERTAIN, T0.plusSeconds(1)));
    }
    NewOperation recent = abandoned(OperationState.FAILED, T0.plusSeconds(100));
    NewOperation pending = begun("{}");

    Journal batched = journalPurgingInBatchesOf(5);
    assertEquals(23, batched.purge(T0.plusSeconds(50)), "five batches of 5 and one of 3");
    assertEquals(0, batched.purge(T0.plusSeconds(50)), "nothing is left to purge");

    for (NewOperation op : old) {
      assertTrue(batched.find(op.id()).isEmpty(), op.id().toString());
    }
    assertTrue(batched.find(recent.id()).isPresent());
    assertTrue(batched.find(pending.id()).isPresent());
  }

  /**
   * A queued operation whose outcome no handler has received (the app stopped between its terminal
   * write and the callback) is how the next {@code resumePending} learns it: purged, the handler
   * would never hear that the order was charged. It goes with the first purge after its delivery.
   */
  @Test
  void purgeKeepsAFinishedOperationWhoseOutcomeIsOwedToItsHandler() throws Exception {
    OperationRecord owed = finished(queued("{\"owed\":1}"), OperationState.SUCCEEDED);
    NewOperation delivered = queued("{\"delivered\":1}");
    finished(delivered, OperationState.FAILED);
    journal().recordOutcomeDelivered(delivered.id(), T0.plusSeconds(2));
    NewOperation inline = newOp("{\"inline\":1}");
    finished(inline, OperationState.UNCERTAIN);

    assertEquals(2, journal().purge(T0.plusSeconds(50)), "the delivered one and the inline one");

    assertEquals(Optional.of(owed), journal().find(owed.id()), "kept as it was");
    assertEquals(List.of(owed.id()), journal().findUndelivered(null, 10).stream().map(OperationRecord::id).toList());
    assertTrue(journal().find(delivered.id()).isEmpty());
    assertTrue(journal().find(inline.id()).isEmpty());

    assertTrue(journal().recordOutcomeDelivered(owed.id(), T0.plusSeconds(60)));
    assertEquals(1, journal().purge(T0.plusSeconds(50)), "delivered now: the next purge takes it");
    assertTrue(journal().find(owed.id()).isEmpty());
  }

  @Test
  void aPurgeInBatchesPassesOverOwedOperationsAndDeletesEveryOtherOne() throws Exception {
    List<OperationId> owed = new ArrayList<>();
    List<OperationId> old = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      if (i % 2 == 0) {
        owed.add(finished(queued("{\"owed\":" + i + "}"), OperationState.SUCCEEDED).id());
      } else {
        old.add(abandoned(OperationState.FAILED, T0.plusSeconds(1)).id());
      }
    }

    Journal batched = journalPurgingInBatchesOf(3);
    assertEquals(8, batched.purge(T0.plusSeconds(50)), "every old delivered or inline one, whatever the batches met");
    assertEquals(0, batched.purge(T0.plusSeconds(50)), "nothing is left to purge");

    for (OperationId id : old) {
      assertTrue(batched.find(id).isEmpty(), id.toString());
    }
    for (OperationId id : owed) {
      assertTrue(batched.find(id).isPresent(), id.toString());
    }
  }

  @Test
  void aClosedJournalRefusesWork() throws Exception {
    journal().close();
    assertThrows(JournalException.class, () -> journal().begin(newOp("{}")));
  }

  // ---- queued operations and the delivery of outcomes (issue 24)

  private NewOperation queued(String body) {
    NewOperation op = newOp(body);
    return new NewOperation(op.id(), op.reference(), op.fingerprint(), op.request(), op.createdAt(), true);
  }

  /** Begins, claims and finishes {@code op} in {@code state}. */
  private OperationRecord finished(NewOperation op, OperationState state) throws Exception {
    journal().begin(op);
    Lease lease = journal().claim(op.id(), "n", T0, LEASE).orElseThrow();
    return journal().transition(op.id(), lease, Transition.finish(state, T0.plusSeconds(1),
        state == OperationState.SUCCEEDED ? ok("{}") : null, state == OperationState.SUCCEEDED ? null : "why"));
  }

  @Test
  void beginRecordsWhetherTheOperationIsQueuedAndEveryReadReturnsIt() throws Exception {
    NewOperation queued = queued("{\"q\":1}");
    NewOperation inline = newOp("{\"q\":0}");
    assertTrue(journal().begin(queued).record().queued());
    assertFalse(journal().begin(inline).record().queued());
    assertTrue(journal().begin(queued).record().queued(), "the existing record");
    assertTrue(journal().find(queued.id()).orElseThrow().queued());
    assertFalse(journal().find(inline.id()).orElseThrow().queued());
    Lease lease = journal().claim(queued.id(), "n", T0, LEASE).orElseThrow();
    assertTrue(journal().transition(queued.id(), lease, Transition.retryAt(T0, T0, "later")).queued());
    assertTrue(journal().findDue(T0, null, 100).stream().filter(r -> r.id().equals(queued.id()))
        .allMatch(OperationRecord::queued));
  }

  @Test
  void aDeliveryIsRecordedOnceAndOnlyForATerminalOperation() throws Exception {
    NewOperation op = queued("{}");
    journal().begin(op);
    assertFalse(journal().recordOutcomeDelivered(op.id(), T0), "PENDING has no outcome to deliver");
    Lease lease = journal().claim(op.id(), "n", T0, LEASE).orElseThrow();
    assertFalse(journal().recordOutcomeDelivered(op.id(), T0), "nor has IN_FLIGHT");
    OperationRecord done = journal().transition(op.id(), lease,
        Transition.finish(OperationState.SUCCEEDED, T0.plusSeconds(1), ok("{}"), null));
    assertNull(done.outcomeDeliveredAt());
    assertTrue(done.outcomeUndelivered());

    assertTrue(journal().recordOutcomeDelivered(op.id(), T0.plusSeconds(2)));
    assertFalse(journal().recordOutcomeDelivered(op.id(), T0.plusSeconds(3)), "already recorded");
    OperationRecord r = journal().find(op.id()).orElseThrow();
    assertEquals(T0.plusSeconds(2), r.outcomeDeliveredAt());
    assertFalse(r.outcomeUndelivered());
    assertEquals(done.updatedAt(), r.updatedAt(), "recording who was told changes nothing else");
    assertEquals(done.withOutcomeDeliveredAt(T0.plusSeconds(2)), r);
    assertFalse(journal().recordOutcomeDelivered(id("unknown"), T0), "no such operation: nothing recorded");
  }

  @Test
  void recordOutcomesDeliveredRecordsWhatRecordOutcomeDeliveredWouldForEach() throws Exception {
    Instant at = T0.plusSeconds(5);
    List<OperationId> oneByOne = deliveryCases();
    List<OperationId> batch = deliveryCases();

    int expected = 0;
    for (OperationId id : oneByOne) {
      if (journal().recordOutcomeDelivered(id, at)) {
        expected++;
      }
    }
    int recorded = journal().recordOutcomesDelivered(batch, at);

    assertEquals(expected, recorded, "how many it recorded, as recordOutcomeDelivered counts them one by one");
    for (int i = 0; i < batch.size(); i++) {
      Optional<OperationRecord> single = journal().find(oneByOne.get(i));
      Optional<OperationRecord> batched = journal().find(batch.get(i));
      assertEquals(single, batched.map(r -> sameIdentityAs(single.orElseThrow(), r)), "case " + i);
    }
    for (int i = 0; i < 3; i++) {
      OperationRecord owed = journal().find(batch.get(i)).orElseThrow();
      assertEquals(at, owed.outcomeDeliveredAt(), "an owed outcome of a terminal operation is recorded: " + owed);
      assertFalse(owed.outcomeUndelivered());
    }
    assertEquals(T0.plusSeconds(2), journal().find(batch.get(3)).orElseThrow().outcomeDeliveredAt(),
        "a delivery recorded before is kept");
    for (int i = 4; i < 6; i++) {
      assertNull(journal().find(batch.get(i)).orElseThrow().outcomeDeliveredAt(), "not terminal: nothing recorded");
    }
    assertTrue(journal().findUndelivered(null, 100).isEmpty(), "nothing owed any more");
    assertEquals(0, journal().recordOutcomesDelivered(List.of(), at));
  }

  /**
   * Operations in each case of a delivery, in this order: three owed outcomes (queued and
   * SUCCEEDED, FAILED, UNCERTAIN), one delivered at T0 + 2 s, one PENDING, one IN_FLIGHT, one
   * inline SUCCEEDED, one the journal does not hold, and the first one again.
   */
  private List<OperationId> deliveryCases() throws Exception {
    List<OperationId> ids = new ArrayList<>();
    for (OperationState state : List.of(OperationState.SUCCEEDED, OperationState.FAILED, OperationState.UNCERTAIN)) {
      ids.add(finished(queued("{\"s\":\"" + state + "\"}"), state).id());
    }
    OperationId delivered = finished(queued("{\"delivered\":1}"), OperationState.SUCCEEDED).id();
    journal().recordOutcomeDelivered(delivered, T0.plusSeconds(2));
    ids.add(delivered);
    NewOperation pending = queued("{\"pending\":1}");
    journal().begin(pending);
    ids.add(pending.id());
    NewOperation inFlight = queued("{\"inFlight\":1}");
    journal().begin(inFlight);
    journal().claim(inFlight.id(), "n", T0, LEASE).orElseThrow();
    ids.add(inFlight.id());
    ids.add(finished(newOp("{\"inline\":1}"), OperationState.SUCCEEDED).id());
    ids.add(id("unknown"));
    ids.add(ids.get(0));
    return ids;
  }

  @Test
  void findUndeliveredPagesThroughTheQueuedTerminalOperationsNobodyReceivedInIdentityOrder() throws Exception {
    List<OperationId> owed = new ArrayList<>();
    for (OperationState state : List.of(OperationState.SUCCEEDED, OperationState.FAILED, OperationState.UNCERTAIN,
        OperationState.SUCCEEDED, OperationState.SUCCEEDED)) {
      owed.add(finished(queued("{\"s\":\"" + state + "\"}"), state).id());
    }
    NewOperation delivered = queued("{\"delivered\":1}");
    finished(delivered, OperationState.SUCCEEDED);
    journal().recordOutcomeDelivered(delivered.id(), T0);
    finished(newOp("{\"inline\":1}"), OperationState.SUCCEEDED);
    journal().begin(queued("{\"pending\":1}"));
    owed.sort(ORDER);

    assertEquals(owed, pages(2, (after, size) -> {
      List<OperationRecord> page = journal().findUndelivered(idOf(after), size);
      page.forEach(r -> assertTrue(r.outcomeUndelivered(), r.toString()));
      return page;
    }));
    assertThrows(IllegalArgumentException.class, () -> journal().findUndelivered(null, 0));
  }

  @Test
  void aRedriveClearsTheRecordedDelivery() throws Exception {
    NewOperation op = queued("{}");
    finished(op, OperationState.FAILED);
    journal().recordOutcomeDelivered(op.id(), T0);
    OperationRecord redriven = journal().redrive(op.id(), T0.plusSeconds(5));
    assertNull(redriven.outcomeDeliveredAt());
    assertEquals(redriven, journal().find(op.id()).orElseThrow());
    Lease lease = journal().claim(op.id(), "n", T0.plusSeconds(5), LEASE).orElseThrow();
    journal().transition(op.id(), lease, Transition.finish(OperationState.SUCCEEDED, T0.plusSeconds(6), ok("{}"),
        null));
    assertEquals(List.of(op.id()), journal().findUndelivered(null, 10).stream().map(OperationRecord::id).toList(),
        "its new outcome is owed");
  }

  @Test
  void redriveIfUnchangedRedrivesOnlyAnOperationStillAsRead() throws Exception {
    // As read, then settled by another pass (re-driven, claimed, FAILED) and its outcome delivered.
    NewOperation settled = queued("{\"n\":1}");
    OperationRecord listed = finished(settled, OperationState.UNCERTAIN);
    journal().redrive(settled.id(), T0.plusSeconds(2));
    Lease lease = journal().claim(settled.id(), "node-other", T0.plusSeconds(2), LEASE).orElseThrow();
    journal().transition(settled.id(), lease, Transition.finish(OperationState.FAILED, T0.plusSeconds(3), null,
        "reconciled: no such charge"));
    journal().recordOutcomeDelivered(settled.id(), T0.plusSeconds(4));
    OperationRecord afterOther = journal().find(settled.id()).orElseThrow();

    assertEquals(Optional.empty(), journal().redriveIfUnchanged(listed, T0.plusSeconds(5)),
        "FAILED since it was read as UNCERTAIN");
    assertEquals(afterOther, journal().find(settled.id()).orElseThrow(), "nothing written, the delivery kept");

    // UNCERTAIN again, but at another generation: re-driven and sent again since it was read.
    NewOperation resent = begun("{\"n\":2}");
    Lease first = journal().claim(resent.id(), "n", T0, LEASE).orElseThrow();
    OperationRecord old = journal().transition(resent.id(), first, Transition.finish(OperationState.UNCERTAIN,
        T0.plusSeconds(1), null, "timeout"));
    journal().redrive(resent.id(), T0.plusSeconds(2));
    Lease second = journal().claim(resent.id(), "n", T0.plusSeconds(2), LEASE).orElseThrow();
    OperationRecord now = journal().transition(resent.id(), second, Transition.finish(OperationState.UNCERTAIN,
        T0.plusSeconds(3), null, "timeout again"));
    assertEquals(Optional.empty(), journal().redriveIfUnchanged(old, T0.plusSeconds(5)),
        "same state, another generation");
    assertEquals(now, journal().find(resent.id()).orElseThrow());

    // Still as read: re-driven as redrive does it.
    NewOperation failed = queued("{\"n\":3}");
    OperationRecord asRead = finished(failed, OperationState.FAILED);
    journal().recordOutcomeDelivered(failed.id(), T0.plusSeconds(2));
    asRead = journal().find(failed.id()).orElseThrow();
    OperationRecord redriven = journal().redriveIfUnchanged(asRead, T0.plusSeconds(5)).orElseThrow();
    assertEquals(OperationState.PENDING, redriven.state());
    assertEquals(asRead.generation(), redriven.generation());
    assertEquals("re-driven from FAILED", redriven.reason());
    assertNull(redriven.outcomeDeliveredAt());
    assertEquals(T0.plusSeconds(5), redriven.createdAt(), "no attempt: begun anew at the re-drive, as redrive does it");
    assertEquals(redriven, journal().find(failed.id()).orElseThrow());
    assertEquals(Optional.empty(), journal().redriveIfUnchanged(asRead, T0.plusSeconds(6)),
        "a second caller with the same read finds it PENDING");
    assertEquals(redriven, journal().find(failed.id()).orElseThrow());

    // Not in the journal (purged), and a read that may not be re-driven at all.
    NewOperation purged = begun("{\"n\":4}");
    journal().abandon(purged.id(), Transition.finish(OperationState.FAILED, T0, null, "x"));
    OperationRecord purgedAsRead = journal().find(purged.id()).orElseThrow();
    journal().purge(T0.plusSeconds(1));
    assertEquals(Optional.empty(), journal().find(purged.id()), "precondition: purged");
    assertEquals(Optional.empty(), journal().redriveIfUnchanged(purgedAsRead, T0.plusSeconds(7)));
    OperationRecord pending = journal().find(begun("{\"n\":5}").id()).orElseThrow();
    assertThrows(IllegalStateException.class, () -> journal().redriveIfUnchanged(pending, T0.plusSeconds(8)));
    assertEquals(pending, journal().find(pending.id()).orElseThrow());
  }

  @Test
  void settleIfUnchangedLeavesWhatReDriveClaimAndTransitionLeftInOneWrite() throws Exception {
    for (OperationState settledAs : List.of(OperationState.SUCCEEDED, OperationState.FAILED)) {
      for (boolean queued : List.of(true, false)) {
        String what = settledAs + (queued ? ", queued" : ", inline");
        ResponseSnapshot proof = settledAs == OperationState.SUCCEEDED ? ok("{\"order\":\"ord_1\"}") : null;
        Transition settlement = Transition.finish(settledAs, T0.plusSeconds(9), proof, "reconciled: looked it up");
        OperationRecord threeSteps = uncertainWithAnAttempt(queued);
        OperationRecord oneWrite = uncertainWithAnAttempt(queued);

        journal().redrive(threeSteps.id(), settlement.at());
        Lease lease = journal().claim(threeSteps.id(), "node-r", settlement.at(), LEASE).orElseThrow();
        journal().transition(threeSteps.id(), lease, settlement);
        OperationRecord expected = journal().find(threeSteps.id()).orElseThrow();
        OperationRecord settled = journal().settleIfUnchanged(oneWrite, "node-r", LEASE, settlement).orElseThrow();

        assertEquals(expected, sameIdentityAs(threeSteps, settled), what + ": the record a re-drive, a claim and"
            + " the finishing transition left, apart from the identity");
        assertEquals(settled, journal().find(oneWrite.id()).orElseThrow(), what + ": returned as kept");
        assertEquals(oneWrite.generation() + 1, settled.generation(), what + ": a lease from before is stale");
        assertEquals(oneWrite.createdAt(), settled.createdAt(), what + ": a settlement sends nothing; the creation"
            + " time is kept");
        assertEquals(queued, settled.outcomeUndelivered(), what + ": a queued operation's new outcome is owed, even"
            + " though the UNCERTAIN one was delivered");
        assertFalse(journal().findDue(T0.plusSeconds(9), null, 100).stream().anyMatch(r -> r.id().equals(oneWrite.id())),
            what + ": nothing to send");
      }
    }
  }

  @Test
  void settleIfUnchangedSettlesOnlyAnOperationStillAsRead() throws Exception {
    Transition failed = Transition.finish(OperationState.FAILED, T0.plusSeconds(9), null, "reconciled: not found");

    // Settled by another pass since it was read, its outcome delivered.
    OperationRecord listed = uncertainWithAnAttempt(true);
    journal().settleIfUnchanged(listed, "node-other", LEASE, failed).orElseThrow();
    journal().recordOutcomeDelivered(listed.id(), T0.plusSeconds(10));
    OperationRecord afterOther = journal().find(listed.id()).orElseThrow();
    assertEquals(Optional.empty(), journal().settleIfUnchanged(listed, "node-r", LEASE, failed),
        "FAILED since it was read as UNCERTAIN");
    assertEquals(afterOther, journal().find(listed.id()).orElseThrow(), "nothing written, the delivery kept");

    // UNCERTAIN again, at another generation: re-driven and sent again since it was read.
    OperationRecord old = uncertainWithAnAttempt(false);
    journal().redrive(old.id(), T0.plusSeconds(2));
    Lease again = journal().claim(old.id(), "n", T0.plusSeconds(2), LEASE).orElseThrow();
    OperationRecord now = journal().transition(old.id(), again, Transition.finish(OperationState.UNCERTAIN,
        T0.plusSeconds(3), null, "timeout again"));
    assertEquals(Optional.empty(), journal().settleIfUnchanged(old, "node-r", LEASE, failed),
        "same state, another generation");
    assertEquals(now, journal().find(old.id()).orElseThrow());

    // Re-driven since it was read, and PENDING.
    OperationRecord redriven = uncertainWithAnAttempt(false);
    OperationRecord pendingNow = journal().redrive(redriven.id(), T0.plusSeconds(2));
    assertEquals(Optional.empty(), journal().settleIfUnchanged(redriven, "node-r", LEASE, failed));
    assertEquals(pendingNow, journal().find(redriven.id()).orElseThrow());

    // Not in the journal (purged).
    OperationRecord purged = uncertainWithAnAttempt(false);
    journal().purge(T0.plusSeconds(2));
    assertEquals(Optional.empty(), journal().find(purged.id()), "precondition: purged");
    assertEquals(Optional.empty(), journal().settleIfUnchanged(purged, "node-r", LEASE, failed));

    // A read that may not be settled, and a state that is not a settlement: nothing written.
    NewOperation failedOp = newOp("{\"n\":9}");
    OperationRecord notUncertain = finished(failedOp, OperationState.FAILED);
    assertThrows(IllegalStateException.class, () -> journal().settleIfUnchanged(notUncertain, "node-r", LEASE,
        failed));
    assertEquals(notUncertain, journal().find(failedOp.id()).orElseThrow());
    OperationRecord uncertain = uncertainWithAnAttempt(false);
    assertThrows(IllegalArgumentException.class, () -> journal().settleIfUnchanged(uncertain, "node-r", LEASE,
        Transition.finish(OperationState.UNCERTAIN, T0.plusSeconds(9), null, "still unknown")));
    assertEquals(uncertain, journal().find(uncertain.id()).orElseThrow());
  }

  /**
   * An operation whose one attempt went out and got no answer: UNCERTAIN at T0 + 1 s, with that
   * attempt; if queued, its UNCERTAIN outcome was handed to its handler.
   */
  private OperationRecord uncertainWithAnAttempt(boolean queued) throws Exception {
    NewOperation op = queued ? queued("{}") : newOp("{}");
    journal().begin(op);
    Lease lease = journal().claim(op.id(), "n", T0, LEASE).orElseThrow();
    journal().recordAttemptAndTransition(op.id(), lease, attempt(1, lease.generation(), T0),
        Transition.finish(OperationState.UNCERTAIN, T0.plusSeconds(1), null, "timeout after the request went out"));
    if (queued) {
      journal().recordOutcomeDelivered(op.id(), T0.plusSeconds(1));
    }
    return journal().find(op.id()).orElseThrow();
  }

  /** Threads that race in the concurrent tests. */
  private static final int RACERS = 4;
  /** Rounds of each concurrent test. */
  private static final int ROUNDS = 5;
  /** Operations raced for in a round, one after the other: a race each. */
  private static final int OPS_PER_ROUND = 40;

  /** The one lease granted among {@code leases}; fails if none or several were. */
  private static Lease onlyOne(List<Optional<Lease>> leases, String what) {
    List<Lease> granted = leases.stream().flatMap(Optional::stream).toList();
    assertEquals(1, granted.size(), what + ": exactly one lease may be granted, not " + granted);
    return granted.get(0);
  }

  /** Each racer's result for operation {@code n}, in racer order. */
  private static <T> List<T> column(List<List<T>> byRacer, int n) {
    return byRacer.stream().map(results -> results.get(n)).toList();
  }

  /** The record is IN_FLIGHT under exactly {@code lease}. */
  private static void assertHeldBy(OperationRecord r, Lease lease, String what) {
    assertEquals(OperationState.IN_FLIGHT, r.state(), what);
    assertEquals(lease.owner(), r.owner(), what + ": the record's owner is the one whose lease was granted");
    assertEquals(lease.generation(), r.generation(), what);
    assertEquals(lease.expiresAt(), r.leaseExpiresAt(), what);
  }

  /** One racer's call for one operation; {@code racer} is 0..RACERS-1, {@code op} the operation's index. */
  @FunctionalInterface
  private interface RacerCall<T> {
    T call(int racer, int op) throws Exception;
  }

  /**
   * {@code RACERS} threads that start each of their calls together: a race per operation. A latch
   * or barrier would line them up but release them one after the other, each woken by the OS in
   * turn, so late that the first racer's call is over before the next one starts; and racers that
   * started together drift apart after one call. So before each operation the racers line up on a
   * counter and spin (yielding now and then, for a machine with fewer CPUs than racers) until all
   * have arrived, and those the CPUs are running start at once. Every wait is bounded; nothing
   * sleeps.
   */
  private static final class Race implements AutoCloseable {
    private static final long WAIT_SECONDS = 30;
    private final ExecutorService threads = Executors.newFixedThreadPool(RACERS, r -> {
      Thread t = new Thread(r, "journal-contract-racer");
      t.setDaemon(true);
      return t;
    });

    /**
     * Races on operations 0..ops-1 in turn: every racer calls {@code call} for operation n once
     * all have finished operation n - 1. Each racer's results, in racer order, each in operation
     * order; a racer's exception fails the test with it.
     */
    <T> List<List<T>> run(int ops, RacerCall<T> call) throws Exception {
      AtomicInteger arrived = new AtomicInteger();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
      List<Future<List<T>>> calls = new ArrayList<>();
      for (int i = 0; i < RACERS; i++) {
        int racer = i;
        calls.add(threads.submit(() -> {
          List<T> mine = new ArrayList<>();
          for (int n = 0; n < ops; n++) {
            arrived.incrementAndGet();
            int all = (n + 1) * RACERS;
            for (int spins = 1; arrived.get() < all; spins++) {
              if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException("the racers did not all reach operation " + n + " within "
                    + WAIT_SECONDS + " s");
              }
              if (spins % 256 == 0) {
                Thread.yield();
              } else {
                Thread.onSpinWait();
              }
            }
            mine.add(call.call(racer, n));
          }
          return mine;
        }));
      }
      List<List<T>> results = new ArrayList<>();
      for (Future<List<T>> f : calls) {
        try {
          results.add(f.get(WAIT_SECONDS, TimeUnit.SECONDS));
        } catch (ExecutionException e) {
          // The journal's own exception, as a single-threaded test would see it.
          if (e.getCause() instanceof Exception cause) {
            throw cause;
          }
          if (e.getCause() instanceof Error error) {
            throw error;
          }
          throw e;
        }
      }
      return results;
    }

    @Override
    public void close() throws Exception {
      threads.shutdownNow();
      threads.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS);
    }
  }

  /** {@code r} with {@code twin}'s identity, so that two operations' records compare on all else. */
  private static OperationRecord sameIdentityAs(OperationRecord twin, OperationRecord r) {
    return new OperationRecord(twin.id(), r.reference(), r.fingerprint(), r.request(), r.state(), r.owner(),
        r.generation(), r.leaseExpiresAt(), r.nextAttemptAt(), r.createdAt(), r.updatedAt(), r.attempts(),
        r.response(), r.reason(), r.queued(), r.outcomeDeliveredAt());
  }

  private IdempotencyKey key() {
    return IdempotencyKey.generate(random);
  }

  private OperationId id(String operation) {
    return new OperationId("tenant-a", operation, key());
  }

  private static RequestSnapshot request(String body) {
    return RequestSnapshot.builder("POST", URI.create("https://api.example.test/v1/orders?x=1"))
        .header("Content-Type", "application/json")
        .header("X-Trace", "t1")
        .body(body.getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
  }

  private static NewOperation op(OperationId id, String reference, String body) {
    RequestSnapshot r = request(body);
    return new NewOperation(id, reference, Fingerprinter.defaults().fingerprint(r), r, T0);
  }

  private NewOperation newOp(String body) {
    return op(id("create-order"), null, body);
  }

  /** A new operation, begun: PENDING. */
  private NewOperation begun(String body) throws Exception {
    NewOperation op = newOp(body);
    journal().begin(op);
    return op;
  }

  /** A new operation, begun and abandoned in {@code state} at {@code at}. */
  private NewOperation abandoned(OperationState state, Instant at) throws Exception {
    NewOperation op = begun("{}");
    journal().abandon(op.id(), Transition.finish(state, at, null, "x"));
    return op;
  }

  private static ResponseSnapshot ok(String body) {
    return new ResponseSnapshot(201, Map.of("Content-Type", List.of("application/json"), "Idempotent-Replayed",
        List.of("false")), body.getBytes(StandardCharsets.UTF_8));
  }

  private static AttemptRecord attempt(int number, long generation, Instant at) {
    return new AttemptRecord(number, generation, at, at.plusMillis(5), Classification.AMBIGUOUS, null,
        "java.net.SocketTimeoutException", "read timeout", Duration.ofMillis(250), "retry after backoff");
  }

  /** One page of a paged query: at most {@code size} records after {@code after} (null: from the start). */
  @FunctionalInterface
  private interface PagedQuery {
    List<OperationRecord> page(OperationRecord after, int size) throws Exception;
  }

  /**
   * Pages through {@code query} with pages of {@code size} until an empty page (a journal may return
   * fewer than {@code size} while more follow); every record seen, in order.
   */
  private static List<OperationId> pages(int size, PagedQuery query) throws Exception {
    List<OperationId> seen = new ArrayList<>();
    OperationRecord after = null;
    List<OperationRecord> page;
    do {
      page = query.page(after, size);
      assertTrue(page.size() <= size, "a page holds at most " + size + " records: " + page.size());
      page.forEach(r -> seen.add(r.id()));
      after = page.isEmpty() ? null : page.get(page.size() - 1);
    } while (!page.isEmpty());
    return seen;
  }

  private static OperationId idOf(OperationRecord r) {
    return r == null ? null : r.id();
  }
}
