package dev.idem.core;

import static dev.idem.core.SecretRuleCalls.refusedOnEveryWayIn;
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
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SecretRuleTest {

  @ParameterizedTest
  @ValueSource(strings = {"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "X_API_KEY",
      "apikey", "X-Auth-Token", "X-Client-Secret", "X-Password", "X-Session-Id", "X-Hub-Signature-256",
      "X-Amz-Security-Token", "X-Amz-Credential", "api.key", "access_token",
      // Named *-Key: each the whole credential of its API (Azure API Management, Azure Functions,
      // Datadog, Cosmos DB); journaled in clear until a review on 2026-12-06.
      "Ocp-Apim-Subscription-Key", "x-functions-key", "DD-APPLICATION-KEY", "X-Master-Key", "access_key",
      "X.Master.Key", "key", "KEY"})
  void theDefaultRuleTreatsTheseNamesAsSecrets(String name) {
    assertTrue(RequestSnapshot.isSecretByDefault(name), name);
  }

  @ParameterizedTest
  @ValueSource(strings = {"Idempotency-Key", "idempotency-key", "idempotency_key", "X-Idempotency-Key",
      "Cko-Idempotency-Key", "Content-Type", "Accept", "X-Request-Id", "X-Request-Source", "amount", "X-Keyword",
      "Keys", "Monkey", "X-Key-Id", "X-Keys"})
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

  /**
   * A credential header named *-Key stays out of the journal, and of the stored response, but is
   * sent; an idempotency key header of another name is kept.
   */
  @Test
  void keyNamedCredentialHeadersStayOutOfTheJournalButReachTheWire() throws Exception {
    Harness h = new Harness();
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example.com/v1/orders"))
        .header("Ocp-Apim-Subscription-Key", "planted-subscription-key-1")
        .header("x-functions-key", "planted-functions-key-2")
        .header("X-Idempotency-Key", "not-a-credential")
        .body("{}".getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
    Operation op = Operation.builder("create-order", request).build();
    ScriptedTransport t = h.transport(op).then(status(201,
        java.util.Map.of("X-Master-Key", "planted-echo-3", "X-Idempotency-Key", "echoed")));
    h.executor.execute(op, t);
    assertEquals(Set.of("x-idempotency-key"), h.record(op).request().headers().keySet());
    assertTrue(h.record(op).response().header("x-master-key").isEmpty());
    assertEquals("echoed", h.record(op).response().header("x-idempotency-key").orElseThrow());
    assertEquals("planted-subscription-key-1",
        t.sent().get(0).request().header("ocp-apim-subscription-key").orElseThrow());
  }

  /**
   * A DPoP proof (RFC 9449) is a credential bound to its access token, which the rule already keeps
   * out (Authorization: DPoP ...): journaled, it would be readable in the file and, on a resume,
   * sent stale without its token. It stays out, even when the app names it in allowHeaders; a live
   * attempt still sends it.
   */
  @Test
  void aDpopProofStaysOutOfTheJournalEvenWhenAllowedButReachesTheWire() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowHeaders(Set.of("DPoP")));
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example.com/v1/orders"))
        .header("Authorization", "DPoP planted-access-token-1")
        .header("DPoP", "eyJ0eXAiOiJkcG9wK2p3dCJ9.planted-proof-2.sig")
        .header("X-Request-Source", "checkout")
        .body("{}".getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
    Operation op = Operation.builder("create-order", request).build();
    ScriptedTransport t = h.transport(op).then(status(201));
    h.executor.execute(op, t);
    assertEquals(Set.of("x-request-source"), h.record(op).request().headers().keySet());
    assertEquals("eyJ0eXAiOiJkcG9wK2p3dCJ9.planted-proof-2.sig", t.sent().get(0).request().header("dpop").orElseThrow());
    assertTrue(RequestSnapshot.DEFAULT_SECRET_HEADERS.contains("dpop"));
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

  /**
   * An Azure SAS signature: secret as a query parameter name, not as a header name. A Google API
   * key's {@code key} is secret as both (a header named {@code Key} is a credential too).
   */
  @Test
  void sigIsASecretQueryParameterButNotAHeaderKeyIsBoth() {
    for (String name : List.of("sig", "SIG", "key", "Key")) {
      assertTrue(RequestSnapshot.isSecretQueryParameterByDefault(name), name);
    }
    for (String name : List.of("sig", "SIG")) {
      assertFalse(RequestSnapshot.isSecretByDefault(name), name);
    }
    for (String name : List.of("subscription-key", "access_key")) {
      assertTrue(RequestSnapshot.isSecretQueryParameterByDefault(name), name);
    }
    for (String name : List.of("se", "sp", "sv", "keys", "signed", "monkey", "Idempotency-Key", "idempotency_key")) {
      assertFalse(RequestSnapshot.isSecretQueryParameterByDefault(name), name);
    }
    assertTrue(RequestSnapshot.isSecretQueryParameterByDefault("jsessionid"));
    assertTrue(RequestSnapshot.isSecretQueryParameterByDefault("access_token"));
  }

  /** A nested URL's parameters by exact name only: a return URL's ?author=, ?session_id= are ordinary. */
  @Test
  void nestedQueryParametersAreSecretByExactNameOnly() {
    for (String name : List.of("access_token", "Token", "api_key", "password", "X-Amz-Signature", "jsessionid", "sig", "KEY")) {
      assertTrue(RequestSnapshot.isSecretNestedQueryParameterByDefault(name), name);
    }
    for (String name : List.of("author", "oauth_provider", "session", "session_id", "sessionId", "keys", "page")) {
      assertFalse(RequestSnapshot.isSecretNestedQueryParameterByDefault(name), name);
    }
  }

  /** Path parameters by exact name only: matrix parameters (;author=, ;session=) are ordinary. */
  @Test
  void pathParametersAreSecretByExactNameOnly() {
    for (String name : List.of("jsessionid", "JSESSIONID", "sig", "Key")) {
      assertTrue(RequestSnapshot.isSecretPathParameterByDefault(name), name);
    }
    for (String name : List.of("author", "session", "token", "sessionid", "keys", "year")) {
      assertFalse(RequestSnapshot.isSecretPathParameterByDefault(name), name);
    }
    URI matrix = URI.create("https://library.example.test/books;author=tolkien;jsessionid=j1/reviews");
    assertEquals("https://library.example.test/books;author=tolkien;jsessionid=redacted/reviews",
        RequestSnapshot.redactedUri(matrix));
  }

  /**
   * A credential in the path or in a URL nested in a query value is refused like a secret query
   * parameter: the message names the parameter that holds it, never its value.
   */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "https://a.blob.core.windows.net/c/b?sv=2022-11-02&sp=rw&sig=planted-sig|query parameter 'sig'",
      "https://maps.example.test/geo?address=Paris&key=AIzaplanted|query parameter 'key'",
      "https://shop.example.test/cart;jsessionid=planted-session/items|path parameter 'jsessionid'",
      "https://api.example.test/login?next=https://u:planted-pw@idp.example.test/|query parameter 'next' holds a URL",
      "https://api.example.test/login?redirect=https%3A%2F%2Fidp.example.test%2F%3Fcode%3D1%26token%3Dplanted|query parameter 'redirect' holds a URL",
  })
  void aCredentialInThePathOrANestedUrlIsRefusedNamingWhereItIs(String uri, String where) throws Exception {
    IllegalArgumentException e = refusedOnEveryWayIn(new Harness(), "create-order", uri, where);
    assertTrue(e.getMessage().contains("allowQueryParameters"), e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(strings = {"https://a.blob.core.windows.net/c/b?sv=2022-11-02&se=2026-12-31&sp=rw&keys=2",
      "https://shop.example.test/cart;v=2/items?page=1", "https://api.example.test/login?next=https://idp.example.test/cb",
      "https://api.example.test/login?email=a@b.example.test&q=100%25"})
  void aUriWithoutACredentialIsAccepted(String uri) throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-order", Requests.postJson(uri, "{}")).build();
    h.executor.execute(op, h.transport(op).then(status(200)));
    assertEquals(URI.create(uri), h.record(op).request().uri());
  }

  /**
   * Why a request's {@code ?key=} is refused rather than redacted: the journaled URI is what a
   * resume sends, so a redacted one would send {@code key=redacted}. An app whose {@code key} is
   * innocent (an object key) allows it, and the resume sends it as given.
   */
  @Test
  void anAllowedKeyIsJournaledAndSentAgainOnResumeAsGiven() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of("key")));
    String uri = "https://files.example.test/v1/uploads?key=invoices%2F2026%2F1.pdf";
    Operation op = Operation.builder("upload", Requests.postJson(uri, "{}")).build();
    h.executor.enqueue(op);
    ScriptedTransport t = h.transport(op).then(status(201));

    h.executor.resume(op.id(), t);

    assertEquals(URI.create(uri), t.sent().get(0).request().uri());
    assertEquals(OperationState.SUCCEEDED, h.record(op).state());
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
