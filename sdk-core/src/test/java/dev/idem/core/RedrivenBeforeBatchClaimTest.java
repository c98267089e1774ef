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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Why: a concurrent resume pass (resumeConcurrency > 1) whose batch claim took an operation
 * re-driven after the page read it checked the age limit on the page record (expired), ended
 * nothing under the claim (KeyRetention.expireClaimed reads it again: young again), and then led
 * the flight with that stale page record, whose old creation the attempt loop took for its age
 * limit: the first retry "would fall past the age limit" of long ago, and the operation went back
 * to PENDING although the re-drive gave it a fresh hour. The lane now sends it as the journal holds
 * it, as the one-at-a-time path does, under the batch's claim. (RvAge2RedriveConcurrentLaneTest is
 * the case where the batch claim missed it and the lane claims on its own.)
 */
class RedrivenBeforeBatchClaimTest {
  private static final Duration AGE_LIMIT = Duration.ofHours(1);

  @Test
  void aConcurrentPassRetriesAnOperationReDrivenBeforeItsBatchClaimTookIt() throws Exception {
    Operation x = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    AtomicReference<Harness> hr = new AtomicReference<>();
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
          Duration leaseFor) throws IdempotencyException {
        // After the page read x, it passes its age limit, another instance ends it unsent, and the
        // operator re-drives it (never sent: it begins anew, young again); then the batch claims it.
        Harness h = hr.get();
        h.time.jump(AGE_LIMIT.plusMinutes(5));
        Lease l = claim(x.id(), "other-instance", h.time.now(), Duration.ofMinutes(1)).orElseThrow();
        transition(x.id(), l, Transition.finish(OperationState.FAILED, h.time.now(), null,
            "not sent: at its age limit (another instance)"));
        h.executor.redrive(x.id());
        return super.claimAll(asRead, owner, h.time.now(), leaseFor);
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
    assertEquals(OperationState.SUCCEEDED, r.state(), "retried within the age limit the re-drive began; " + r.reason());
    assertEquals(2, host.attempts(x.key()), "the 503 and the retry, in this pass");
    assertEquals(List.of(503, 201), r.attempts().stream().map(AttemptRecord::status).toList());
    assertEquals(new ResumeSummary(1, 1, 0, 0, 0, 0, 0, 0), summary);
    assertEquals(0, journal.count(OperationState.IN_FLIGHT), "no claim left behind");
  }
}
