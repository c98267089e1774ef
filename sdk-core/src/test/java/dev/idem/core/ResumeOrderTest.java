package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * resumePending takes a restart's own leases first, then the oldest due, and runs up to
 * resumeConcurrency at once without waiting for a page (issue 30).
 */
class ResumeOrderTest {
  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  @Test
  void aRestartResumesItsOwnLeasesFirstThenTheOldestDueWhateverTheirKeys() throws Exception {
    Harness h = new Harness();
    // The dead incarnation (same owner name) queued 150 operations, a second apart, then died
    // with two of them on the wire.
    List<IdempotencyKey> byAge = new ArrayList<>();
    List<Operation> all = new ArrayList<>();
    for (int i = 0; i < 150; i++) {
      Operation op = order(i);
      h.executor.enqueue(op);
      all.add(op);
      byAge.add(op.key());
      h.time.advance(Duration.ofSeconds(1));
    }
    List<IdempotencyKey> held = new ArrayList<>();
    for (Operation op : List.of(all.get(120), all.get(30))) {
      h.journal.claim(op.id(), Harness.OWNER, h.time.now(), Duration.ofMinutes(2)).orElseThrow();
      held.add(op.key());
      byAge.remove(op.key());
    }
    List<IdempotencyKey> sent = Collections.synchronizedList(new ArrayList<>());
    Transport ok = (request, key) -> {
      sent.add(key);
      return ScriptedTransport.response(201);
    };

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(ok, o -> {}, f -> { throw new AssertionError(f); })));

    assertEquals(150, summary.succeeded(), summary.toString());
    assertEquals(150, sent.size(), "each once");
    assertTrue(sent.subList(0, 2).containsAll(held), "the restart's own leases first: " + sent.subList(0, 3));
    assertEquals(byAge, sent.subList(2, 150), "then the rest in the order they became due");
    for (Operation op : all) {
      assertEquals(OperationState.SUCCEEDED, h.journal.find(op.id()).orElseThrow().state());
    }
  }

  @Test
  void aSlowOperationHoldsOneLaneNotThePagesAfterIt() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.resumeConcurrency(2));
    int n = 250;  // more than two pages of 100
    List<Operation> ops = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Operation op = order(i);
      h.executor.enqueue(op);
      ops.add(op);
      h.time.advance(Duration.ofMillis(1));
    }
    IdempotencyKey slowKey = ops.get(0).key();  // the oldest: the first resumed
    CountDownLatch othersDone = new CountDownLatch(n - 1);
    AtomicInteger running = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    Transport transport = (request, key) -> {
      most.accumulateAndGet(running.incrementAndGet(), Math::max);
      try {
        if (key.equals(slowKey)) {
          // Held until every other operation is through: with a barrier per page, the first
          // page would wait for this one, and this one for the pages after it.
          assertTrue(othersDone.await(20, TimeUnit.SECONDS), "the other lane was held up by this one's page");
        } else {
          othersDone.countDown();
        }
        return ScriptedTransport.response(201);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      } finally {
        running.decrementAndGet();
      }
    };

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(transport, o -> {}, f -> { throw new AssertionError(f); })));

    assertEquals(n, summary.succeeded(), summary.toString());
    // At most: on a loaded machine the other lane may run every other operation before the slow
    // one's thread first reaches the transport, and then no two ever overlap.
    assertTrue(most.get() <= 2, "at most resumeConcurrency at once, was " + most.get());
  }
}
