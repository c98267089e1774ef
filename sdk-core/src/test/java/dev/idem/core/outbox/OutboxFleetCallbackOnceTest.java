package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Two instances of a fleet, each with a dispatcher and outcome callbacks, on one journal. README:
 * "Resume handlers and outbox awaiters are handed a queued operation's outcome once ... Only a
 * crash between your callback and that record repeats a callback". Register's Javadoc: the
 * callbacks are "for the outcomes of the operations this dispatcher delivers".
 *
 * <p>Instance b reads a page of due operations; before it starts delivering them, instance a
 * (whose poll came a moment earlier) delivers one of them. Each instance has its own virtual time,
 * so a's poll can be run exactly inside that window, on this thread.
 */
class OutboxFleetCallbackOnceTest {
  private final VirtualTime timeA = new VirtualTime();
  private final VirtualTime timeB = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(timeA, FakeHost.always(201));
  private final List<String> callbacks = Collections.synchronizedList(new ArrayList<>());
  private volatile boolean interleaved;

  /** Instance b's view of the journal: instance a polls right after b read its page. */
  private final ForwardingJournal seenByB = new ForwardingJournal(journal) {
    @Override
    public List<OperationRecord> findDue(Instant now, String owner, Set<String> names, OperationRecord after,
          int limit) throws IdempotencyException {
      List<OperationRecord> page = super.findDue(now, owner, names, after, limit);
      if (!page.isEmpty() && !interleaved) {
        interleaved = true;
        timeA.advance(Duration.ZERO);  // instance a's poll, between b's read and b's deliveries
      }
      return page;
    }
  };

  private IdempotentExecutor executor(String owner, VirtualTime time, dev.idem.core.spi.Journal j) {
    return IdempotentExecutor.builder().journal(j).owner(owner).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
  }

  @Test
  void anOperationDeliveredByOneInstanceIsNotReportedToTheOtherInstancesCallbacksToo() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    OperationId id = executor("producer", timeA, journal).enqueue(op).id();

    OutboxDispatcher a = OutboxDispatcher.builder(executor("pod-a", timeA, journal)).clock(timeA.clock())
        .scheduler(timeA.scheduler())
        .registerAsync("create-order", host, o -> callbacks.add("pod-a onSuccess " + o.key()), e -> callbacks.add(
            "pod-a onFailure")).build().start();
    OutboxDispatcher b = OutboxDispatcher.builder(executor("pod-b", timeB, seenByB)).clock(timeB.clock())
        .scheduler(timeB.scheduler())
        .registerAsync("create-order", host, o -> callbacks.add("pod-b onSuccess " + o.key()), e -> callbacks.add(
            "pod-b onFailure")).build().start();

    timeB.advance(Duration.ZERO);  // b's first poll; a's runs inside it
    timeA.advance(Duration.ZERO);

    assertEquals(OperationState.SUCCEEDED, journal.find(id).orElseThrow().state());
    assertEquals(1, host.attempts(op.key()), "one attempt, by pod-a");
    assertEquals(1, callbacks.size(), "one delivery, by pod-a, yet its outcome reached the callbacks of both"
        + " instances: " + callbacks);
    a.close();
    b.close();
  }
}
