package dev.idem.core;

import dev.idem.core.spi.RequestSnapshot;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SecretRuleTest {

  @ParameterizedTest
  @ValueSource(strings = {"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "X_API_KEY",
      "apikey", "X-Auth-Token", "X-Client-Secret", "X-Password", "X-Session-Id", "X-Hub-Signature-256",
      "X-Amz-Security-Token", "X-Amz-Credential", "api.key", "access_token"})
  void theDefaultRuleTreatsTheseNamesAsSecrets(String name) {
    assertTrue(RequestSnapshot.isSecretByDefault(name), name);
  }

  @ParameterizedTest
  @ValueSource(strings = {"Idempotency-Key", "idempotency-key", "Content-Type", "Accept", "X-Request-Id",
      "X-Request-Source", "amount"})
  void theseAreNot(String name) {
    assertFalse(RequestSnapshot.isSecretByDefault(name), name);
  }

  @Test
  void headersTheRuleNamesStayOutOfTheJournalButReachTheWire() throws Exception {
    Harness h = new Harness();
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example.com/v1/orders"))
        .header("X-Api-Key", "planted-api-key-1")
        .header("X-Auth-Token", "planted-auth-token-2")
        .header("X-Session-Id", "planted-session-3")
        .header("X-Request-Source", "checkout")
        .body("{}".getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
    Operation op = Operation.builder("create-order", request).build();
    ScriptedTransport t = h.transport(op).then(status(200));
    h.executor.execute(op, t);
    assertEquals(Set.of("x-request-source"), h.record(op).request().headers().keySet());
    assertEquals("planted-api-key-1", t.sent().get(0).request().header("x-api-key").orElseThrow());
  }

  @Test
  void theAppCanOptOutOfTheRuleAndAddItsOwnNames() throws Exception {
    Harness h = new Harness(Harness.POLICY,
        b -> b.allowHeaders(Set.of("X-Session-Id")).secretHeaders(Set.of("X-Merchant-Pin")));
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example.com/v1/orders"))
        .header("X-Session-Id", "not-a-secret-here")
        .header("X-Merchant-Pin", "1234")
        .header("X-Api-Key", "still-secret")
        .build();
    Operation op = Operation.builder("create-order", request).build();
    h.executor.execute(op, h.transport(op).then(status(200)));
    assertEquals(Set.of("x-session-id"), h.record(op).request().headers().keySet());
  }

  @Test
  void aSecretLookingQueryParameterIsRefusedAtBeginNamingItAndTheWayToAllowIt() throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-order",
        Requests.postJson("https://api.example.com/v1/orders?currency=EUR&api_key=planted-query-key", "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(200));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.executor.execute(op, t));
    assertTrue(e.getMessage().contains("'api_key'"), e.getMessage());
    assertTrue(e.getMessage().contains("allowQueryParameters"), e.getMessage());
    assertFalse(e.getMessage().contains("planted-query-key"), e.getMessage());
    assertEquals(0, t.count());
    assertTrue(h.journal.find(op.id()).isEmpty());
    assertThrows(IllegalArgumentException.class, () -> h.executor.enqueue(op));
    assertTrue(h.journal.find(op.id()).isEmpty());
  }

  /**
   * User info is a credential in the URI, which the journal keeps whole (and the CLI's show
   * prints): refused like a secret query parameter. Found by a review on 2026-12-03; before, it was
   * journaled in clear.
   */
  @Test
  void aUriWithUserInfoIsRefusedAtBeginWithoutQuotingIt() throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-order",
        Requests.postJson("https://sk_planted:pw-planted@api.example.com/v1/orders", "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(200));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.executor.execute(op, t));
    assertTrue(e.getMessage().contains("user info"), e.getMessage());
    assertFalse(e.getMessage().contains("planted"), e.getMessage());
    assertEquals(0, t.count());
    assertTrue(h.journal.find(op.id()).isEmpty());
    assertThrows(IllegalArgumentException.class, () -> h.executor.enqueue(op));
    assertTrue(h.journal.find(op.id()).isEmpty());
  }

  @Test
  void anAllowedQueryParameterIsJournaledAsGiven() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of("session")));
    Operation op = Operation.builder("create-order",
        Requests.postJson("https://api.example.com/v1/orders?session=weekly", "{}")).build();
    h.executor.execute(op, h.transport(op).then(status(200)));
    assertEquals("session=weekly", h.record(op).request().uri().getQuery());
  }
}
