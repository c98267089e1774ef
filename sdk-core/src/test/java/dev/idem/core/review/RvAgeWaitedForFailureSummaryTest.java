package dev.idem.core.review;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Review rv-age: 2de2749f counts EXPIRED for whatever non-SUCCEEDED state the execution the pass
 * waited for (runner.expire joins its flight) left. An inline call whose attempt is on the wire
 * past the age limit and then gets a permanent 400 ends FAILED because the server refused it: it
 * was sent, and not ended by its age limit, yet the pass counts it in expired.
 */
class RvAgeWaitedForFailureSummaryTest {
  @Test
  void anOperationTheWaitedForExecutionSentAndTheServerRefusedIsNotCountedExpired() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.maxPendingAge(Duration.ofHours(1)));
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    FakeHost host = new FakeHost(h.time, (k, n, t) -> Reply.hang());
    CompletableFuture<Outcome> inline = h.executor.executeAsync(op, host);
    assertEquals(1, host.held().size());
    h.time.jump(Duration.ofHours(2));  // the answer is slow: past the age limit, and the lease

    List<OperationException> failed = Collections.synchronizedList(new ArrayList<>());
    AtomicReference<Object> result = new AtomicReference<>();
    Thread pass = new Thread(() -> {
      try {
        result.set(h.executor.resumePending(Map.of("create-order",
            ResumeHandler.of(host, o -> { }, failed::add))));
      } catch (Throwable e) {
        result.set(e);
      }
    });
    pass.start();
    // The pass waits for the live execution (it leads the operation's flight).
    while (pass.getState() != Thread.State.WAITING && pass.getState() != Thread.State.TIMED_WAITING
        && pass.isAlive()) {
      Thread.onSpinWait();
    }
    host.held().get(0).complete(FakeHost.response(400, Map.of()));
    pass.join();

    assertEquals(OperationState.FAILED, h.state(op));
    assertEquals(1, host.attempts(op.key()));
    assertEquals(new ResumeSummary(1, 0, 1, 0, 0, 0, 0, 0), result.get(),
        "sent and refused by the server (400), not ended by its age limit: not expired");
  }
}
