package dev.idem.core;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.StaleOwnerException;
import dev.idem.core.spi.Transition;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class InMemoryJournalTest {
  private static final Instant T0 = Instant.parse("2026-11-02T10:00:00Z");
  private final InMemoryJournal journal = new InMemoryJournal();

  private NewOperation op(String key, String reference) {
    RequestSnapshot req = Requests.order("{\"k\":\"" + key + "\"}");
    return new NewOperation(new OperationId("tenant", "create-order", IdempotencyKey.of(key)), reference,
        Fingerprinter.defaults().fingerprint(req), req, T0);
  }

  private static AttemptRecord attempt(Lease lease) {
    return new AttemptRecord(1, lease.generation(), T0, T0, Classification.TRANSIENT, 503, null, "HTTP 503",
        Duration.ZERO, "test");
  }

  private static List<OperationId> ids(List<OperationRecord> records) {
    return records.stream().map(OperationRecord::id).toList();
  }

  @Test
  void listingsSeeEveryBegunOperationOnceAcrossAPurgeAndABeginAgain() throws Exception {
    NewOperation a = op("k1", "ref-1");
    NewOperation b = op("k2", "ref-2");
    journal.begin(a);
    assertEquals(List.of(a.id()), ids(journal.findByState(OperationState.PENDING, null, 10)));
    journal.begin(b);
    assertEquals(List.of(a.id(), b.id()), ids(journal.findByState(OperationState.PENDING, null, 10)));
    assertEquals(List.of(b.id()), ids(journal.findByState(OperationState.PENDING, a.id(), 10)), "paged after a");
    Lease lease = journal.claim(a.id(), "p1", T0, Duration.ofMinutes(1)).orElseThrow();
    journal.transition(a.id(), lease, Transition.finish(OperationState.SUCCEEDED, T0, ScriptedTransport.response(201),
        null));

    assertEquals(1, journal.purge(T0.plusSeconds(1)), "a, finished before the cut; b is PENDING");
    assertEquals(List.of(), journal.findByReference("tenant", "ref-1"));
    journal.begin(a); // the same identity, begun anew after its purge
    assertEquals(List.of(a.id()), ids(journal.findByReference("tenant", "ref-1")));
    assertEquals(List.of(a.id(), b.id()), ids(journal.findByState(OperationState.PENDING, null, 10)),
        "each identity once");
    assertEquals(0, journal.purge(T0.plusSeconds(1)));
  }

  @Test
  void beginAndClaimStoresWhatBeginThenClaimWouldAndIndexesItAsInFlight() throws Exception {
    NewOperation op = op("k0", "ref-0");
    InMemoryJournal stepByStep = new InMemoryJournal();
    stepByStep.begin(op);
    Lease expectedLease = stepByStep.claim(op.id(), "p1", T0, Duration.ofMinutes(2)).orElseThrow();
    OperationRecord expected = stepByStep.find(op.id()).orElseThrow();

    BeginResult begun = journal.beginAndClaim(op, "p1", Duration.ofMinutes(2));

    assertTrue(begun.created());
    assertEquals(expectedLease, begun.lease());
    assertEquals(expected, begun.record());
    assertEquals(expected, journal.find(op.id()).orElseThrow());
    assertEquals(List.of(), journal.findDue(T0.plusSeconds(119), "p2", null, 10), "leased until T0 + 2 min");
    assertEquals(List.of(expected), journal.findDue(T0.plusSeconds(120), "p2", null, 10), "due once the lease ends");
    journal.transition(op.id(), begun.lease(), Transition.finish(OperationState.SUCCEEDED, T0,
        ScriptedTransport.response(201), null));

    BeginResult again = journal.beginAndClaim(op, "p1", Duration.ofMinutes(2));
    assertFalse(again.created());
    assertTrue(again.claimed().isEmpty(), "an existing operation is returned unclaimed");
    assertEquals(OperationState.SUCCEEDED, again.record().state());
    assertThrows(IllegalArgumentException.class, () -> journal.beginAndClaim(new NewOperation(op.id(), null,
        op.fingerprint(), op.request(), T0, true), "p1", Duration.ofMinutes(2)));
  }

  @Test
  void abandonOnlyMovesToATerminalState() throws Exception {
    NewOperation op = op("k1", null);
    journal.begin(op);
    Lease first = journal.claim(op.id(), "p1", T0, Duration.ofMinutes(1)).orElseThrow();
    journal.transition(op.id(), first, Transition.retryAt(T0, T0.plusSeconds(1), "503"));
    // PENDING -> IN_FLIGHT is a claim's job (it bumps the generation and sets a lease); abandon
    // must not do it, or the dead lease above would be current again.
    assertThrows(IllegalArgumentException.class, () -> journal.abandon(op.id(),
        new Transition(OperationState.IN_FLIGHT, T0, null, null, "sneaky")));
    assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state());
    assertThrows(StaleOwnerException.class, () -> journal.transition(op.id(), first,
        Transition.finish(OperationState.SUCCEEDED, T0, ScriptedTransport.response(200), null)));
    assertThrows(IllegalStateException.class, () -> journal.abandon(op.id(),
        new Transition(OperationState.SUCCEEDED, T0, null, ScriptedTransport.response(200), "no response said so")));
    OperationRecord r = journal.abandon(op.id(), Transition.finish(OperationState.UNCERTAIN, T0, null, "past retention"));
    assertEquals(OperationState.UNCERTAIN, r.state());
  }

  @Test
  void leasesFenceEveryWrite() throws Exception {
    NewOperation op = op("k2", null);
    journal.begin(op);
    Lease a = journal.claim(op.id(), "p1", T0, Duration.ofSeconds(30)).orElseThrow();
    assertEquals(1, a.generation());
    assertTrue(journal.claim(op.id(), "p2", T0.plusSeconds(29), Duration.ofSeconds(30)).isEmpty(), "live lease");
    Lease b = journal.claim(op.id(), "p2", T0.plusSeconds(30), Duration.ofSeconds(30)).orElseThrow();
    assertEquals(2, b.generation());
    OperationRecord before = journal.find(op.id()).orElseThrow();
    assertThrows(StaleOwnerException.class, () -> journal.recordAttempt(op.id(), a, attempt(a)));
    assertThrows(StaleOwnerException.class, () -> journal.transition(op.id(), a,
        Transition.finish(OperationState.FAILED, T0, null, "late")));
    assertThrows(StaleOwnerException.class, () -> journal.transition(op.id(), new Lease("p1", 2, T0, false), 
        Transition.finish(OperationState.FAILED, T0, null, "wrong owner")));
    assertEquals(before, journal.find(op.id()).orElseThrow());
    journal.recordAttempt(op.id(), b, attempt(b));
    journal.transition(op.id(), b, Transition.finish(OperationState.SUCCEEDED, T0, ScriptedTransport.response(200), null));
    assertTrue(journal.claim(op.id(), "p3", T0.plusSeconds(999), Duration.ofSeconds(30)).isEmpty(), "terminal");
  }

  @Test
  void beginIsIdempotentAndRefusesAnotherFingerprint() throws Exception {
    NewOperation op = op("k3", "cart-1");
    assertTrue(journal.begin(op).created());
    BeginResult again = journal.begin(op);
    assertFalse(again.created());
    RequestSnapshot other = Requests.order("{\"k\":\"other\"}");
    IdempotencyKeyReusedException e = assertThrows(IdempotencyKeyReusedException.class, () -> journal.begin(
        new NewOperation(op.id(), null, Fingerprinter.defaults().fingerprint(other), other, T0)));
    assertFalse(e.detectedByServer());
    assertEquals(List.of(journal.find(op.id()).orElseThrow()), journal.findByReference("tenant", "cart-1"));
    assertTrue(journal.findByReference("other-tenant", "cart-1").isEmpty());
  }

  @Test
  void findDuePagesThroughDueWorkOnly() throws Exception {
    for (String k : List.of("a", "b", "c", "d")) {
      journal.begin(op(k, null));
    }
    OperationId b = op("b", null).id();
    OperationId c = op("c", null).id();
    Lease lb = journal.claim(b, "p1", T0, Duration.ofSeconds(10)).orElseThrow();
    journal.transition(b, lb, Transition.retryAt(T0, T0.plusSeconds(60), "503"));
    journal.claim(c, "p1", T0, Duration.ofSeconds(10)).orElseThrow();
    List<OperationRecord> page1 = journal.findDue(T0, null, 1);
    assertEquals(List.of("a"), page1.stream().map(r -> r.id().key().value()).toList());
    List<OperationRecord> page2 = journal.findDue(T0, page1.get(0).id(), 10);
    assertEquals(List.of("d"), page2.stream().map(r -> r.id().key().value()).toList());
    assertEquals(List.of("a", "b", "c", "d"),
        journal.findDue(T0.plusSeconds(60), null, 10).stream().map(r -> r.id().key().value()).toList());
    assertEquals(List.of("c"), journal.findByState(OperationState.IN_FLIGHT, null, 10).stream()
        .map(r -> r.id().key().value()).toList());
    assertThrows(IllegalArgumentException.class, () -> journal.findDue(T0, null, 0));
  }

  @Test
  void purgeDeletesOnlyOldTerminalRecords() throws Exception {
    NewOperation done = op("done", null);
    NewOperation pending = op("pending", null);
    journal.begin(done);
    journal.begin(pending);
    journal.abandon(done.id(), Transition.finish(OperationState.FAILED, T0, null, "x"));
    assertEquals(0, journal.purge(T0));
    assertEquals(1, journal.purge(T0.plusSeconds(1)));
    assertTrue(journal.find(done.id()).isEmpty());
    assertTrue(journal.find(pending.id()).isPresent());
  }

  @Test
  void closedJournalRefusesWork() throws Exception {
    journal.close();
    assertThrows(JournalException.class, () -> journal.begin(op("x", null)));
    assertThrows(JournalException.class, () -> journal.find(op("x", null).id()));
  }
}
