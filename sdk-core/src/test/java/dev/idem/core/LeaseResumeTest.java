package dev.idem.core;

import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.Journal;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Leases after a process died mid-attempt: resumePending reports and can wait for leases held
 * elsewhere, an instance restarted under its own owner name reclaims its leases at once, and the
 * dead holder's attempt counts as ambiguous (guarantee 4 across a crash).
 */
class LeaseResumeTest {
  private static final Duration LEASE = Duration.ofMinutes(2);

  private final VirtualTime time = new VirtualTime();
  // Reclaiming one's own live lease is the durable journals' part (Journal.claim); this stands in for it.
  private final Journal journal = new InMemoryJournal();
  private final List<Outcome> delivered = new ArrayList<>();
  private final List<OperationException> failures = new ArrayList<>();

  private IdempotentExecutor executor(String owner) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).random(() -> 0.5).owner(owner).leaseFor(LEASE).build();
  }

  private Map<String, ResumeHandler> handlers(FakeHost host) {
    return Map.of("create-order", ResumeHandler.of(host, delivered::add, failures::add));
  }

  /**
   * A process named {@code owner} journaled the operation, claimed it, and died while its attempt
   * was on the wire; the server committed that attempt.
   */
  private Operation diedMidAttempt(String owner, AtomicInteger effects) throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    executor(owner).enqueue(op);
    assertTrue(journal.claim(op.id(), owner, time.now(), LEASE).isPresent());
    effects.incrementAndGet();
    time.jump(Duration.ofSeconds(1));  // the restart
    return op;
  }

  private OperationRecord record(Operation op) throws IdempotencyException {
    return journal.find(op.id()).orElseThrow();
  }

  @Test
  void resumePendingReportsOperationsLeasedElsewhereInsteadOfSkippingThemSilently() throws Exception {
    AtomicInteger effects = new AtomicInteger();
    Operation op = diedMidAttempt("pod-a", effects);
    FakeHost host = new FakeHost(time, FakeHost.always(201));

    ResumeSummary summary = executor("pod-b").resumePending(handlers(host));

    assertEquals(new ResumeSummary(1, 0, 0, 0, 0, 0, 0, 1), summary);
    assertEquals(0, host.totalAttempts(), "another owner's live lease is left alone");
    assertEquals(OperationState.IN_FLIGHT, record(op).state());
  }

  @Test
  void resumePendingCanWaitForLeasesHeldElsewhereAndThenResumesThem() throws Exception {
    AtomicInteger effects = new AtomicInteger();
    Operation op = diedMidAttempt("pod-a", effects);
    FakeHost host = new FakeHost(time, (key, n, now) -> Reply.status(201, Map.of("Idempotent-Replayed", "true")));

    ResumeSummary summary = executor("pod-b").resumePending(handlers(host), Duration.ofMinutes(5));

    assertEquals(1, summary.succeeded(), summary.toString());
    assertEquals(0, summary.leasedElsewhere());
    assertEquals(List.of(Duration.ofSeconds(119).plusMillis(1)), time.sleeperWaits(),
        "slept once, until just after the dead process's lease expired");
    assertEquals(OperationState.SUCCEEDED, record(op).state());
    assertEquals(op.key(), delivered.get(0).key());
    assertEquals(1, effects.get());
  }

  @Test
  void waitingForLeasesHeldElsewhereStopsAtItsBound() throws Exception {
    AtomicInteger effects = new AtomicInteger();
    diedMidAttempt("pod-a", effects);
    FakeHost host = new FakeHost(time, FakeHost.always(201));

    ResumeSummary summary = executor("pod-b").resumePending(handlers(host), Duration.ofSeconds(30));

    assertEquals(1, summary.leasedElsewhere());
    assertEquals(List.of(Duration.ofSeconds(30).plusMillis(1)), time.sleeperWaits());
    assertEquals(0, host.totalAttempts());
  }

  @Test
  void anInstanceRestartedUnderItsOwnOwnerNameReclaimsItsLeaseAtOnce() throws Exception {
    AtomicInteger effects = new AtomicInteger();
    Operation op = diedMidAttempt("pod-a", effects);
    FakeHost host = new FakeHost(time, (key, n, now) -> Reply.status(201, Map.of("Idempotent-Replayed", "true")));

    ResumeSummary summary = executor("pod-a").resumePending(handlers(host));

    assertEquals(1, summary.succeeded(), summary.toString());
    assertTrue(time.sleeperWaits().isEmpty(), "no wait for the lease to expire");
    assertEquals(1, host.attempts(op.key()));
    List<AttemptRecord> attempts = record(op).attempts();
    assertEquals(2, attempts.size(), attempts.toString());
    assertEquals(Classification.AMBIGUOUS, attempts.get(0).classification(), "the dead incarnation's attempt");
    assertTrue(delivered.get(0).replayed());
  }

  @ParameterizedTest
  @ValueSource(ints = {503, 400})
  void aCrashAfterACommittedAttemptThenFailuresEndsUncertainNeverFailed(int status) throws Exception {
    AtomicInteger effects = new AtomicInteger();
    Operation op = diedMidAttempt("pod-a", effects);
    FakeHost host = new FakeHost(time, FakeHost.always(status));

    executor("pod-a").resumePending(handlers(host));

    assertEquals(OperationState.UNCERTAIN, record(op).state(), "the server holds one effect: never FAILED");
    assertEquals(1, effects.get());
    assertEquals(1, failures.size());
    assertTrue(failures.get(0) instanceof OperationUncertainException, failures.get(0).toString());
  }

  @Test
  void executingTheSameOperationAfterTheLeaseExpiredAlsoCountsTheDeadAttempt() throws Exception {
    AtomicInteger effects = new AtomicInteger();
    Operation op = diedMidAttempt("pod-a", effects);
    time.jump(LEASE);
    FakeHost host = new FakeHost(time, FakeHost.always(503));

    assertThrows(OperationUncertainException.class, () -> executor("pod-b").execute(op, host));

    assertEquals(Classification.AMBIGUOUS, record(op).attempts().get(0).classification());
    assertEquals(6, record(op).attempts().size(), "the dead attempt and five of its own");
  }

  @Test
  void aBlankOwnerIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> IdempotentExecutor.builder().owner(" "));
  }
}
