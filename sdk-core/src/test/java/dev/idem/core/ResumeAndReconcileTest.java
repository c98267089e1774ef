package dev.idem.core;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ExpiredPendingAction;
import dev.idem.core.resume.Reconciliation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** resumePending after a restart, the key-retention rule, and reconciliation of UNCERTAIN operations. */
class ResumeAndReconcileTest {
  // The breaker would open on the timeouts that make operations UNCERTAIN here; that is tested elsewhere.
  private final Harness h = new Harness(Harness.POLICY, b -> b.circuitBreaker(CircuitBreakerSettings.disabled()));

  private Operation enqueue(String name, String body) throws IdempotencyException {
    RequestSnapshot request = Requests.order(body).toBuilder().header("Authorization", "Bearer secret").build();
    Operation op = Operation.builder(name, request).build();
    h.executor.enqueue(op);
    return op;
  }

  /**
   * What a crash between an attempt's SUCCESS record and its SUCCEEDED transition leaves behind (the
   * journal may acknowledge the second up to its deferred interval after the first is durable, and
   * the first attempt's claim is folded into begin): a PENDING operation whose history says the
   * server ran it. The resend is refused with a 400 (a server without a replay of its first answer):
   * the effect exists, so the operation must end UNCERTAIN, never FAILED. Seen flaky in
   * JournalKillTest ("before-completion") under load; before this it ended FAILED.
   */
  @Test
  void aSuccessWhoseTransitionACrashLostNeverEndsFailedWhenTheResendIsRefused() throws Exception {
    Operation op = enqueue("create-order", "{\"n\":1}");
    Instant now = h.time.clock().instant();
    Lease lease = h.journal.claim(op.id(), "dead-process", now, Duration.ofMinutes(2)).orElseThrow();
    h.journal.recordAttempt(op.id(), lease, new AttemptRecord(1, lease.generation(), now, now,
        Classification.SUCCESS, 201, null, "HTTP 201", Duration.ZERO, "done"));
    h.journal.transition(op.id(), lease, Transition.retryAt(now, now, "recovered after a crash"));
    ScriptedTransport transport = new ScriptedTransport(h.time).otherwise(ScriptedTransport.status(400));
    List<OperationException> failures = new ArrayList<>();

    h.executor.resumePending(Map.of("create-order", ResumeHandler.of(transport,
        o -> { throw new AssertionError("a 400 is not a success: " + o); }, failures::add)));

    assertEquals(1, transport.count(), "resent once");
    assertEquals(op.key(), transport.sent().get(0).key(), "with its journaled key");
    assertEquals(OperationState.UNCERTAIN, h.journal.find(op.id()).orElseThrow().state());
    assertEquals(1, failures.size());
    assertInstanceOf(OperationUncertainException.class, failures.get(0));
  }

  @Test
  void resumeSendsEachPendingOperationOnceWithItsJournaledKeyThroughItsHandler() throws Exception {
    List<Operation> orders = List.of(enqueue("create-order", "{\"n\":1}"), enqueue("create-order", "{\"n\":2}"),
        enqueue("create-order", "{\"n\":3}"));
    Operation refund = enqueue("refund", "{\"n\":4}");
    ScriptedTransport transport = new ScriptedTransport(h.time).otherwise(ScriptedTransport.status(201));
    List<Outcome> delivered = new ArrayList<>();

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(transport, delivered::add, f -> { throw new AssertionError(f); })));

    assertEquals(new ResumeSummary(4, 3, 0, 0, 0, 0, 1), summary);
    assertEquals(3, transport.count(), "one send per pending order");
    Set<IdempotencyKey> sentKeys = new HashSet<>();
    transport.sent().forEach(s -> sentKeys.add(s.key()));
    Set<IdempotencyKey> journaled = new HashSet<>();
    orders.forEach(op -> journaled.add(op.key()));
    assertEquals(journaled, sentKeys, "each went out with the key journaled before the restart");
    transport.sent().forEach(s -> assertTrue(s.request().header("Authorization").isEmpty(),
        "the journaled snapshot has no secret; the transport must re-apply it"));
    assertEquals(3, delivered.size());
    for (Operation op : orders) {
      assertEquals(OperationState.SUCCEEDED, h.state(op));
    }
    assertEquals(OperationState.PENDING, h.state(refund), "no handler: left alone");
  }

  @Test
  void anOperationNeverSentThatReachesItsAgeLimitIsNotSentAndHonestlyFails() throws Exception {
    Operation op = enqueue("create-order", "{\"n\":1}");
    h.time.jump(Duration.ofHours(25));
    ScriptedTransport transport = new ScriptedTransport(h.time).otherwise(ScriptedTransport.status(201));
    List<OperationException> failures = new ArrayList<>();

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(transport, o -> { throw new AssertionError(o); }, failures::add)));

    assertEquals(0, transport.count(), "never re-sent after the server may have forgotten the key");
    assertEquals(1, summary.expired());
    assertEquals(1, summary.failed(), "nothing can have reached the server: FAILED is the truth");
    OperationRecord r = h.record(op);
    assertEquals(OperationState.FAILED, r.state());
    assertTrue(r.reason().contains("key retention"), r.reason());
    assertInstanceOf(OperationFailedException.class, failures.get(0));
    assertEquals(op.key(), failures.get(0).key());
  }

  @Test
  void anOperationThatMayHaveBeenSentAndReachesItsAgeLimitIsNotResentButBecomesUncertain() throws Exception {
    Operation op = enqueue("create-order", "{\"n\":1}");
    // A process claimed it, may have sent it, and died: the next claim counts that attempt as ambiguous.
    h.journal.claim(op.id(), "a-process-that-died", h.time.now(), Duration.ofMinutes(2));
    h.time.jump(Duration.ofHours(25));
    ScriptedTransport transport = new ScriptedTransport(h.time).otherwise(ScriptedTransport.status(201));
    List<OperationException> failures = new ArrayList<>();

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(transport, o -> { throw new AssertionError(o); }, failures::add)));

    assertEquals(0, transport.count(), "never re-sent blindly after the server may have forgotten the key");
    assertEquals(1, summary.expired());
    assertEquals(1, summary.uncertain());
    OperationRecord r = h.record(op);
    assertEquals(OperationState.UNCERTAIN, r.state());
    assertTrue(r.reason().contains("key retention"), r.reason());
    assertInstanceOf(OperationUncertainException.class, failures.get(0));
    assertEquals(op.key(), failures.get(0).key());
  }

  @Test
  void resendIsTheDocumentedOptOutOfTheRetentionRule() throws Exception {
    Harness resend = new Harness(Harness.POLICY, b -> b.expiredPendingAction(ExpiredPendingAction.RESEND));
    Operation op = Operation.builder("create-order", Requests.order("{}")).build();
    resend.executor.enqueue(op);
    resend.time.jump(Duration.ofHours(25));
    ScriptedTransport transport = new ScriptedTransport(resend.time).otherwise(ScriptedTransport.status(201));

    ResumeSummary summary = resend.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(transport, o -> {}, f -> { throw new AssertionError(f); })));

    assertEquals(1, transport.count());
    assertEquals(op.key(), transport.sent().get(0).key());
    assertEquals(1, summary.succeeded());
    assertEquals(OperationState.SUCCEEDED, resend.state(op));
  }

  @Test
  void resumeReadsOneHundredThousandPendingOperationsPageByPage() throws Exception {
    AtomicInteger largestPage = new AtomicInteger();
    AtomicInteger largestLimit = new AtomicInteger();
    Journal paging = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
          throws IdempotencyException {
        largestLimit.accumulateAndGet(limit, Math::max);
        List<OperationRecord> page = super.findDue(now, owner, after, limit);
        largestPage.accumulateAndGet(page.size(), Math::max);
        return page;
      }
    };
    Harness big = new Harness(paging, Harness.POLICY, b -> {});
    int n = 100_000;
    for (int i = 0; i < n; i++) {
      big.executor.enqueue(Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build());
    }
    AtomicInteger sends = new AtomicInteger();
    Transport ok = (request, key) -> {
      sends.incrementAndGet();
      return ScriptedTransport.response(201);
    };

    ResumeSummary summary = big.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(ok, o -> {}, f -> { throw new AssertionError(f); })));

    assertEquals(n, summary.succeeded());
    assertEquals(n, sends.get(), "each pending operation sent exactly once");
    assertTrue(largestLimit.get() <= 100 && largestPage.get() <= 100,
        "never more than one page of records in memory: " + largestPage.get());
    assertEquals(0, paging.count(OperationState.PENDING));
  }

  @Test
  void reconciliationSettlesUncertainOperationsThroughTheStateMachine() throws Exception {
    Operation found = uncertain("{\"n\":1}");
    Operation absent = uncertain("{\"n\":2}");
    Operation unknown = uncertain("{\"n\":3}");
    Operation unreachable = uncertain("{\"n\":4}");
    ResponseSnapshot proof = ScriptedTransport.response(200, Map.of(), "{\"order\":\"ord_1\"}");

    int settled = h.executor.reconcileUncertain(record -> {
      if (record.id().equals(found.id())) {
        return Reconciliation.succeeded(proof, "GET /orders?ref=1 found ord_1");
      }
      if (record.id().equals(absent.id())) {
        return Reconciliation.failed("GET /orders?ref=2 found nothing");
      }
      if (record.id().equals(unreachable.id())) {
        throw new SocketTimeoutException("reconciliation lookup timed out");
      }
      return Reconciliation.unknown("the server cannot tell yet");
    });

    assertEquals(2, settled);
    OperationRecord f = h.record(found);
    assertEquals(OperationState.SUCCEEDED, f.state());
    assertEquals(proof, f.response());
    assertTrue(f.reason().startsWith("reconciled: "), f.reason());
    assertEquals(found.key(), f.id().key(), "reconciliation keeps the key");
    assertEquals(OperationState.FAILED, h.state(absent));
    assertEquals(OperationState.UNCERTAIN, h.state(unknown));
    assertEquals(OperationState.UNCERTAIN, h.state(unreachable));
    Outcome again = h.executor.execute(found, h.transport(found));
    assertTrue(again.fromJournal(), "a reconciled success is answered from the journal, nothing is sent");
  }

  @Test
  void listingFindsTheDeadLettersAndTheUncertainOnes() throws Exception {
    Operation u = uncertain("{\"n\":1}");
    Operation failed = Operation.builder("create-order", Requests.order("{\"n\":9}")).build();
    assertThrows(OperationFailedException.class,
        () -> h.executor.execute(failed, h.transport(failed).then(ScriptedTransport.status(400))));

    assertEquals(List.of(failed.id()), h.executor.list(OperationState.FAILED, null, 10).stream()
        .map(OperationRecord::id).toList());
    assertEquals(List.of(u.id()), h.executor.list(OperationState.UNCERTAIN, null, 10).stream()
        .map(OperationRecord::id).toList());
    assertFalse(h.executor.list(OperationState.SUCCEEDED, null, 10).iterator().hasNext());
  }

  private Operation uncertain(String body) throws Exception {
    Operation op = Operation.builder("create-order", Requests.order(body)).build();
    ScriptedTransport t = h.transport(op).otherwise(ScriptedTransport.fail(new SocketTimeoutException("read timed out")));
    assertThrows(OperationUncertainException.class, () -> h.executor.execute(op, t));
    return op;
  }
}
