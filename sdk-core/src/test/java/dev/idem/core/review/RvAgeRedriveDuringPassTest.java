package dev.idem.core.review;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.resume.ResumeHandler;
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
 * Review rv-age: a resume pass applies the age limit to the operation as its page read it. An
 * operator (or the CLI's redrive) that re-drives a never-sent operation while the pass is busy
 * with an earlier one moves its creation to the re-drive, so it is young again; but the pass, when
 * it takes it, still sees the stale creation, and KeyRetention.expireIfDue ends it under a fresh
 * claim without reading it again: the re-drive is undone at once, FAILED "at its age limit",
 * never sent. expireClaimed (c3e92cb3) re-reads under the claim for exactly this ("re-driven since
 * it was read"); expireIfDue, which the same commit calls from expireTaken, does not.
 */
class RvAgeRedriveDuringPassTest {
  private static final Duration AGE_LIMIT = Duration.ofHours(1);

  @Test
  void anOperationReDrivenWhileThePassSendsAnotherIsSentNotEndedAtTheOldAgeLimit() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.maxPendingAge(AGE_LIMIT));
    Operation a = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    Operation b = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    h.executor.enqueue(a);
    h.executor.enqueue(b);
    List<IdempotencyKey> order = Collections.synchronizedList(new ArrayList<>());
    FakeHost host = new FakeHost(h.time, (k, n, t) -> {
      order.add(k);
      if (order.size() == 1) {
        // The first operation's send is slow: meanwhile the other one passes its age limit, is
        // ended by another instance (never sent), and the operator re-drives it: young again.
        Operation other = k.equals(a.key()) ? b : a;
        h.time.jump(AGE_LIMIT.plusMinutes(5));
        try {
          Lease l = h.journal.claim(other.id(), "other-instance", h.time.now(), Duration.ofMinutes(1)).orElseThrow();
          h.journal.transition(other.id(), l, Transition.finish(OperationState.FAILED, h.time.now(), null,
              "not sent: at its age limit (another instance)"));
          OperationRecord redriven = h.executor.redrive(other.id());
          assertEquals(h.time.now(), redriven.createdAt(), "a never-sent operation is begun anew by a re-drive");
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      }
      return Reply.status(201);
    });
    List<Outcome> ok = Collections.synchronizedList(new ArrayList<>());
    List<OperationException> failed = Collections.synchronizedList(new ArrayList<>());

    h.executor.resumePending(Map.of("create-order", ResumeHandler.of(host, ok::add, failed::add)));

    Operation other = order.get(0).equals(a.key()) ? b : a;
    OperationRecord r = h.record(other);
    assertEquals(OperationState.SUCCEEDED, r.state(),
        "re-driven just now, created " + r.createdAt() + " (now " + h.time.now() + "): not past its age limit;"
            + " reason: " + r.reason());
    assertEquals(1, host.attempts(other.key()));
    assertEquals(List.of(), failed);
  }
}
