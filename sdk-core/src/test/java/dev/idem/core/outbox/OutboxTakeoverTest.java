package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A dispatcher on an instance restarted under the same owner name takes back, at its first poll,
 * what its dead incarnation still held; and it takes the rest oldest due first (issue 30).
 */
class OutboxTakeoverTest {
  private static final Duration LEASE = Duration.ofMinutes(2);
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));
  /** The key of every attempt, in the order they were sent. */
  private final List<IdempotencyKey> sent = Collections.synchronizedList(new ArrayList<>());
  private final AsyncTransport recording = (request, key) -> {
    sent.add(key);
    return host.sendAsync(request, key);
  };

  private IdempotentExecutor executor(String owner) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).owner(owner).leaseFor(LEASE).build();
  }

  private OutboxDispatcher.Builder outbox(IdempotentExecutor idem) {
    return OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", recording);
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  private OperationRecord record(OperationId id) throws Exception {
    return journal.find(id).orElseThrow();
  }

  /**
   * pod-0 queued a backlog, then died with two operations on the wire, leased under its name for
   * two more minutes.
   */
  private List<Operation> deadIncarnationOfPod0(List<Operation> backlog) throws Exception {
    IdempotentExecutor dead = executor("pod-0");
    for (int i = 0; i < 50; i++) {
      Operation op = order(i);
      dead.enqueue(op);
      backlog.add(op);
    }
    List<Operation> held = List.of(order(1000), order(1001));
    for (Operation op : held) {
      dead.enqueue(op);
      journal.claim(op.id(), "pod-0", time.now(), LEASE).orElseThrow();
    }
    return held;
  }

  @Test
  void aDispatcherRestartedUnderTheSameNameTakesItsOwnLeasesBackAtItsFirstPollBeforeTheBacklog() throws Exception {
    List<Operation> backlog = new ArrayList<>();
    List<Operation> held = deadIncarnationOfPod0(backlog);
    time.advance(Duration.ofSeconds(5));  // the restart
    host.latency(Duration.ofMillis(100));

    OutboxDispatcher outbox = outbox(executor("pod-0")).maxInFlight(2).build().start();
    time.advance(Duration.ZERO);  // the first poll, and only it

    List<IdempotencyKey> heldKeys = held.stream().map(Operation::key).toList();
    assertEquals(2, sent.size(), "one poll with room for two: " + sent);
    assertTrue(sent.containsAll(heldKeys), "the dead incarnation's two operations go first, not the backlog: " + sent);

    time.advance(Duration.ofSeconds(30));
    for (Operation op : held) {
      OperationRecord r = record(op.id());
      assertEquals(OperationState.SUCCEEDED, r.state());
      assertEquals(2, r.attempts().size(), "the takeover's ambiguous attempt, then the resend");
      assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(),
          "the dead incarnation may have sent it: counted as ambiguous");
      assertEquals(1, host.attempts(op.key()), "one resend, with the same key");
    }
    for (Operation op : backlog) {
      assertEquals(OperationState.SUCCEEDED, record(op.id()).state());
      assertEquals(1, host.attempts(op.key()));
    }
    assertEquals(52, host.effects());
    outbox.close();
  }

  @Test
  void anotherOwnerLeavesThoseLeasesAloneUntilTheyExpire() throws Exception {
    List<Operation> backlog = new ArrayList<>();
    List<Operation> held = deadIncarnationOfPod0(backlog);

    OutboxDispatcher outbox = outbox(executor("pod-7")).build().start();
    time.advance(Duration.ofSeconds(30));

    for (Operation op : held) {
      assertEquals(OperationState.IN_FLIGHT, record(op.id()).state(), "a live lease of another owner is respected");
      assertEquals(0, host.attempts(op.key()));
    }
    assertEquals(50, host.effects(), "the backlog went out meanwhile");
    time.advance(LEASE);
    for (Operation op : held) {
      assertEquals(OperationState.SUCCEEDED, record(op.id()).state());
      assertEquals(1, host.attempts(op.key()));
    }
    outbox.close();
  }

  @Test
  void dueOperationsGoOutOldestDueFirstWhateverTheirKeys() throws Exception {
    IdempotentExecutor idem = executor("pod-0");
    List<IdempotencyKey> byAge = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      Operation op = order(i);
      idem.enqueue(op);
      byAge.add(op.key());
      time.advance(Duration.ofSeconds(1));
    }

    OutboxDispatcher outbox = outbox(idem).maxInFlight(1).build().start();
    time.advance(Duration.ofSeconds(10));

    assertEquals(byAge, sent, "the order in which they became due, not the order of their keys");
    outbox.close();
  }

  @Test
  void anExecutionRunningInThisInstanceUnderItsOwnLeaseIsJoinedNeverClaimedTwice() throws Exception {
    FakeHost slow = new FakeHost(time, (key, n, now) -> Reply.hang());
    IdempotentExecutor idem = executor("pod-0");
    Operation op = order(1);
    CompletableFuture<Outcome> inline = idem.executeAsync(op, slow);
    assertEquals(OperationState.IN_FLIGHT, record(op.id()).state());
    long generation = record(op.id()).generation();

    // Its live lease is this owner's, so it is due for this dispatcher; the executor's
    // single-flight joins the running execution instead of claiming and sending it again.
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", slow).build().start();
    CompletableFuture<Outcome> queued = outbox.await(op.id());
    time.advance(Duration.ofSeconds(5));

    assertEquals(1, slow.attempts(op.key()), "no second attempt while the first is on the wire");
    assertEquals(generation, record(op.id()).generation(), "no second claim");
    assertFalse(inline.isDone());
    slow.held().get(0).complete(FakeHost.response(201, java.util.Map.of()));
    time.advance(Duration.ZERO);
    assertTrue(inline.isDone() && !inline.isCompletedExceptionally());
    // Not joined as a delivery (its caller is told, not the dispatcher's callbacks): the handle
    // learns the outcome from the journal.
    time.advance(Duration.ofMinutes(1));

    assertTrue(queued.isDone() && !queued.isCompletedExceptionally());
    assertEquals(OperationState.SUCCEEDED, record(op.id()).state());
    assertEquals(1, slow.attempts(op.key()));
    outbox.close();
  }
}
