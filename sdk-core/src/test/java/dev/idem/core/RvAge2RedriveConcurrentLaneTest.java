package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Review (rv-age2): badec503 made a resume pass send an operation re-driven while the pass ran as the
 * journal holds it (its age limit counting from the re-drive), but only on the one-at-a-time path
 * (resumeOne's {@code record = now}). On a concurrent pass (resumeConcurrency > 1), a lane that takes a
 * job whose batch claim missed it goes through expireTaken -> KeyRetention.expireIfDue, which finds it
 * re-driven, gives the claim back, and returns null; resumeOne then leads the flight with the stale
 * page record (job.record()), whose old creation the AttemptLoop takes for its age limit: the first
 * retry "would fall at or past the age limit" of minutes ago and the operation goes back to PENDING
 * unanswered, although it is young again.
 */
class RvAge2RedriveConcurrentLaneTest {
  private static final Duration AGE_LIMIT = Duration.ofHours(1);

  @Test
  void aConcurrentPassRetriesAnOperationReDrivenAfterItsBatchClaimMissedIt() throws Exception {
    Operation x = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    AtomicReference<Harness> hr = new AtomicReference<>();
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
          Duration leaseFor) throws IdempotencyException {
        List<Optional<Lease>> leases = new ArrayList<>();
        for (OperationRecord r : asRead) {
          // x's row is locked by another instance at this moment: the batch misses it.
          leases.add(r.id().equals(x.id()) ? Optional.empty() : claim(r.id(), owner, now, leaseFor));
        }
        // Before the lane takes it, x passes its age limit, the other instance ends it unsent, and
        // the operator re-drives it (never sent: it begins anew, young again).
        Harness h = hr.get();
        h.time.jump(AGE_LIMIT.plusMinutes(5));
        Lease l = claim(x.id(), "other-instance", h.time.now(), Duration.ofMinutes(1)).orElseThrow();
        transition(x.id(), l, Transition.finish(OperationState.FAILED, h.time.now(), null,
            "not sent: at its age limit (another instance)"));
        h.executor.redrive(x.id());
        return leases;
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(2).maxPendingAge(AGE_LIMIT)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    hr.set(h);
    h.executor.enqueue(x);
    FakeHost host = new FakeHost(h.time, (k, n, t) -> n == 1 ? Reply.status(503) : Reply.status(201));

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(host, o -> { }, e -> { })));

    OperationRecord r = h.record(x);
    assertEquals(OperationState.SUCCEEDED, r.state(),
        "retried within the age limit the re-drive began, as on the one-at-a-time path; " + r.reason());
    assertEquals(2, host.attempts(x.key()), "the 503 and the retry, in this pass");
    assertEquals(new ResumeSummary(1, 1, 0, 0, 0, 0, 0, 0), summary);
  }
}
