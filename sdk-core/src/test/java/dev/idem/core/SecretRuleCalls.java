package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.net.URI;
import java.util.List;
import java.util.Map;

/**
 * The calls the secret rule's tests make over and over, each with the assertions that say what the
 * rule did with it: a request sent as given, a request refused before anything is sent or
 * journaled, a response Location as it was stored. Every call POSTs {@code {}} to the URI.
 */
final class SecretRuleCalls {
  private SecretRuleCalls() {
  }

  /** Executes {@code uri} against a server that answers {@code status}: sent once and journaled as given. */
  static OperationRecord sentOnceAndJournaledAsGiven(Harness h, String name, String uri, int status)
      throws Exception {
    Operation op = Operation.builder(name, Requests.postJson(uri, "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(status));

    h.executor.execute(op, t);

    assertEquals(1, t.count(), "sent once");
    assertEquals(URI.create(uri), h.record(op).request().uri(), "journaled as given");
    return h.record(op);
  }

  static OperationRecord sentOnceAndJournaledAsGiven(Harness h, String name, String uri) throws Exception {
    return sentOnceAndJournaledAsGiven(h, name, uri, 200);
  }

  /**
   * Executes {@code uri}: refused with an IllegalArgumentException, never sent and nothing
   * journaled. Returns the refusal, whose message the caller checks.
   */
  static IllegalArgumentException refusedNothingSentOrJournaled(Harness h, String name, String uri)
      throws Exception {
    return refusedNothingSentOrJournaled(h, Operation.builder(name, Requests.postJson(uri, "{}")).build());
  }

  private static IllegalArgumentException refusedNothingSentOrJournaled(Harness h, Operation op) throws Exception {
    ScriptedTransport t = h.transport(op).then(status(200));

    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.executor.execute(op, t));

    assertEquals(0, t.count(), "never sent");
    assertTrue(h.journal.find(op.id()).isEmpty(), "nothing journaled");
    return e;
  }

  /**
   * A secret {@code uri} refused on every way in: its execute as {@link #refusedNothingSentOrJournaled}
   * with a message naming {@code where} and not quoting the planted value, and its enqueue refused,
   * journaling nothing either. Returns the execute's refusal.
   */
  static IllegalArgumentException refusedOnEveryWayIn(Harness h, String name, String uri, String where)
      throws Exception {
    Operation op = Operation.builder(name, Requests.postJson(uri, "{}")).build();
    IllegalArgumentException e = refusedNothingSentOrJournaled(h, op);
    assertTrue(e.getMessage().contains(where), e.getMessage());
    assertFalse(e.getMessage().contains("planted"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> h.executor.enqueue(op));
    assertTrue(h.journal.find(op.id()).isEmpty(), "nothing journaled by enqueue");
    return e;
  }

  /** Executes an order whose server answers 201 with this {@code Location}: the Location as journaled. */
  static List<String> storedLocation(Harness h, String name, String location) throws Exception {
    Operation op = Operation.builder(name, Requests.order("{}")).build();
    h.executor.execute(op, h.transport(op).then(status(201, Map.of("Location", location))));
    return h.record(op).response().headers().get("location");
  }
}
