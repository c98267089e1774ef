package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * An operation re-driven while a resume pass is busy with another is young again: the pass that
 * read it before the re-drive sends it, and counts its age limit from the re-drive, not from the
 * creation its page read. Sent with the stale record, its first retry "would fall past the age
 * limit" (the old one, minutes ago) and it went back to PENDING unanswered.
 */
class RedrivenDuringPassRetryTest {
  private static final Duration AGE_LIMIT = Duration.ofHours(1);

  @Test
  void anOperationReDrivenDuringThePassIsRetriedWithinItsNewAgeLimit() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.maxPendingAge(AGE_LIMIT));
    Operation a = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    Operation b = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    h.executor.enqueue(a);
    h.executor.enqueue(b);
    List<IdempotencyKey> order = Collections.synchronizedList(new ArrayList<>());
    FakeHost host = new FakeHost(h.time, (k, n, t) -> {
      order.add(k);
      if (order.size() == 1) {
        // While the first send is out, the other operation passes its age limit, another instance
        // ends it unsent, and the operator re-drives it.
        Operation other = k.equals(a.key()) ? b : a;
        h.time.jump(AGE_LIMIT.plusMinutes(5));
        try {
          Lease l = h.journal.claim(other.id(), "other-instance", h.time.now(), Duration.ofMinutes(1)).orElseThrow();
          h.journal.transition(other.id(), l, Transition.finish(OperationState.FAILED, h.time.now(), null,
              "not sent: at its age limit (another instance)"));
          h.executor.redrive(other.id());
        } catch (Exception e) {
          throw new AssertionError(e);
        }
        return Reply.status(201);
      }
      return n == 1 ? Reply.status(503) : Reply.status(201);  // the re-driven one: once unavailable, then done
    });

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(host, o -> { }, e -> { })));

    Operation other = order.get(0).equals(a.key()) ? b : a;
    OperationRecord r = h.record(other);
    assertEquals(OperationState.SUCCEEDED, r.state(), "retried within the age limit the re-drive began; " + r.reason());
    assertEquals(2, host.attempts(other.key()), "the 503 and the retry, in this pass");
    assertEquals(new ResumeSummary(2, 2, 0, 0, 0, 0, 0, 0), summary);
  }
}
