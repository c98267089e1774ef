package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Outcomes are handed to the app once (issue 24): the journal records that a resume handler
 * received an operation's outcome, so later resumes (after a restart: a new executor over the same
 * journal) do not call the handler again for it; and the outcome of a queued operation that no
 * handler took (the process stopped between the terminal write and the callback, or the callback
 * threw) is handed over by the next resume, read from the journal, without sending anything.
 */
class OutcomeHandedOverOnceTest {
  private static final String NAME = "create-order";

  private final Harness h = new Harness(Harness.POLICY, b -> b.circuitBreaker(CircuitBreakerSettings.disabled()));

  /** A restarted process: a new executor, with another owner, over the same journal. */
  private Harness restarted() {
    return new Harness(h.journal, Harness.POLICY, b -> b.circuitBreaker(CircuitBreakerSettings.disabled()));
  }

  private List<Operation> enqueue(int count) throws IdempotencyException {
    List<Operation> ops = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Operation op = Operation.builder(NAME, Requests.order("{\"n\":" + i + "}")).build();
      h.executor.enqueue(op);
      ops.add(op);
    }
    return ops;
  }

  /** Counts the confirmations per key, as an app's order confirmation would happen. */
  private static final class Confirmations {
    final List<Outcome> successes = new ArrayList<>();
    final List<OperationException> failures = new ArrayList<>();

    ResumeHandler handler(ScriptedTransport transport) {
      return handler(transport, o -> { });
    }

    /** @param before runs before a success is counted; a throw there means "not received" */
    ResumeHandler handler(ScriptedTransport transport, Consumer<Outcome> before) {
      return ResumeHandler.of(transport, o -> {
        before.accept(o);
        successes.add(o);
      }, failures::add);
    }

    Set<IdempotencyKey> keys() {
      Set<IdempotencyKey> keys = new HashSet<>();
      successes.forEach(o -> keys.add(o.key()));
      return keys;
    }
  }

  @Test
  void twentyResumedOutcomesAreConfirmedOnceAndLaterResumesNeitherConfirmNorSendAgain() throws Exception {
    List<Operation> ops = enqueue(20);
    ScriptedTransport transport = new ScriptedTransport(h.time).otherwise(ScriptedTransport.status(201));
    Confirmations confirmed = new Confirmations();

    ResumeSummary first = h.executor.resumePending(Map.of(NAME, confirmed.handler(transport)));
    assertEquals(20, first.succeeded(), first.toString());
    for (Operation op : ops) {
      OperationRecord r = h.record(op);
      assertTrue(r.queued(), "enqueue journals the operation as queued");
      assertNotNull(r.outcomeDeliveredAt(), "the handler's receipt is recorded");
      assertFalse(r.outcomeUndelivered());
    }

    for (int restart = 0; restart < 2; restart++) {
      ResumeSummary again = restarted().executor.resumePending(Map.of(NAME, confirmed.handler(transport)));
      assertEquals(0, again.examined(), again.toString());
    }
    assertEquals(20, confirmed.successes.size(), "no confirmation repeated");
    assertEquals(20, confirmed.keys().size());
    assertEquals(20, transport.count(), "nothing sent again");
  }

  /**
   * The handler does not take the outcome of every other operation (it throws, as if the process had
   * died between the terminal write and the callback). Before the journal kept track, those
   * outcomes were never handed to anyone again: SUCCEEDED is not due.
   */
  @Test
  void anOutcomeNoHandlerTookIsHandedOverOnceByTheNextResumeFromTheJournalWithoutSending() throws Exception {
    List<Operation> ops = enqueue(20);
    ScriptedTransport transport = new ScriptedTransport(h.time).otherwise(ScriptedTransport.status(201));
    Set<IdempotencyKey> refused = new HashSet<>();
    for (int i = 0; i < ops.size(); i += 2) {
      refused.add(ops.get(i).key());
    }
    Confirmations confirmed = new Confirmations();

    h.executor.resumePending(Map.of(NAME, confirmed.handler(transport, o -> {
      if (refused.contains(o.key())) {
        throw new IllegalStateException("the app could not take it now");
      }
    })));
    assertEquals(10, confirmed.successes.size());
    for (Operation op : ops) {
      assertEquals(OperationState.SUCCEEDED, h.state(op));
      assertEquals(refused.contains(op.key()), h.record(op).outcomeUndelivered(), op.key().toString());
    }
    assertEquals(10, h.journal.findUndelivered(null, 100).size());

    ResumeSummary handedOver = restarted().executor.resumePending(Map.of(NAME, confirmed.handler(transport)));

    assertEquals(new ResumeSummary(10, 10, 0, 0, 0, 0, 0), handedOver);
    assertEquals(20, confirmed.successes.size());
    assertEquals(20, confirmed.keys().size(), "each outcome confirmed once");
    for (Outcome o : confirmed.successes.subList(10, 20)) {
      assertTrue(refused.contains(o.key()));
      assertTrue(o.fromJournal(), "a handed-over outcome says it may have been seen before");
      assertEquals(201, o.response().status());
    }
    assertEquals(20, transport.count(), "nothing was sent to hand them over");
    assertEquals(List.of(), h.journal.findUndelivered(null, 100));

    ResumeSummary later = restarted().executor.resumePending(Map.of(NAME, confirmed.handler(transport)));
    assertEquals(0, later.examined());
    assertEquals(20, confirmed.successes.size());
  }

  @Test
  void failedAndUncertainEndingsAreHandedOverTooAndSayTheyComeFromTheJournal() throws Exception {
    Operation refusedByServer = enqueue(1).get(0);
    ScriptedTransport badRequest = new ScriptedTransport(h.time).otherwise(ScriptedTransport.status(400));
    h.executor.resumePending(Map.of(NAME, ResumeHandler.of(badRequest, o -> { },
        f -> { throw new IllegalStateException("not now"); })));
    assertEquals(OperationState.FAILED, h.state(refusedByServer));

    Operation uncertain = enqueue(1).get(0);
    ScriptedTransport timeouts = new ScriptedTransport(h.time)
        .otherwise(ScriptedTransport.fail(new java.net.SocketTimeoutException("read timed out")));
    h.executor.resumePending(Map.of(NAME, ResumeHandler.of(timeouts, o -> { },
        f -> { throw new IllegalStateException("not now"); })));
    assertEquals(OperationState.UNCERTAIN, h.state(uncertain));
    int sent = badRequest.count() + timeouts.count();

    Confirmations told = new Confirmations();
    ScriptedTransport none = new ScriptedTransport(h.time);
    ResumeSummary summary = restarted().executor.resumePending(Map.of(NAME, told.handler(none)));

    assertEquals(new ResumeSummary(2, 0, 1, 1, 0, 0, 0), summary);
    assertEquals(2, told.failures.size());
    for (OperationException f : told.failures) {
      if (f.operationId().equals(refusedByServer.id())) {
        assertTrue(assertInstanceOf(OperationFailedException.class, f).fromJournal());
      } else {
        assertEquals(uncertain.id(), f.operationId());
        assertTrue(assertInstanceOf(OperationUncertainException.class, f).fromJournal());
      }
    }
    assertEquals(0, none.count());
    assertEquals(sent, badRequest.count() + timeouts.count(), "nothing sent again");
  }

  @Test
  void anInlineCallersOutcomeIsNeverHandedToAResumeHandler() throws Exception {
    Operation op = Operation.builder(NAME, Requests.order("{\"inline\":true}")).build();
    ScriptedTransport transport = h.transport(op).otherwise(ScriptedTransport.status(201));
    h.executor.execute(op, transport);
    OperationRecord r = h.record(op);
    assertFalse(r.queued());
    assertNull(r.outcomeDeliveredAt());
    assertFalse(r.outcomeUndelivered(), "the caller was told: nothing is owed");

    Confirmations told = new Confirmations();
    ResumeSummary summary = restarted().executor.resumePending(Map.of(NAME, told.handler(transport)));

    assertEquals(0, summary.examined());
    assertEquals(List.of(), told.successes);
  }

  @Test
  void aRedriveClearsTheRecordedDeliverySoThatTheNextOutcomeIsHandedOver() throws Exception {
    Operation op = enqueue(1).get(0);
    ScriptedTransport badRequest = new ScriptedTransport(h.time).then(ScriptedTransport.status(400))
        .otherwise(ScriptedTransport.status(201));
    Confirmations told = new Confirmations();
    h.executor.resumePending(Map.of(NAME, told.handler(badRequest)));
    assertEquals(1, told.failures.size());
    assertNotNull(h.record(op).outcomeDeliveredAt());

    h.executor.redrive(op.id());
    assertNull(h.record(op).outcomeDeliveredAt(), "the next outcome is a new one");
    h.executor.resumePending(Map.of(NAME, told.handler(badRequest)));

    assertEquals(1, told.successes.size());
    assertFalse(told.successes.get(0).fromJournal());
    assertNotNull(h.record(op).outcomeDeliveredAt());
  }
}
