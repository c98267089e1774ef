package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Operation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Review (secrets): the default rule reads a credential by its query parameter name, and misses
 * the ones real URLs carry under other names or in other places: an Azure SAS signature
 * ({@code sig}), a Google API key ({@code key}), a servlet session id in the path
 * ({@code ;jsessionid=}), a URL with user info or a token nested in a parameter's value
 * ({@code ?next=https://user:pw@host/}), and a bare token in a stored Location's fragment. Each
 * reaches the journal (the request URI, or the stored response's Location), and the path
 * parameter also every message that names the request. Each value below is planted as
 * {@code qzPLANT...}.
 */
class ReviewCredentialsTheRuleMissesTest {

  /**
   * A request URI carrying one: refused before anything is journaled or sent (the journaled URI is
   * what a resume sends, so it cannot be rewritten), or journaled without it.
   */
  @ParameterizedTest
  @ValueSource(strings = {
      "https://acct.blob.core.windows.net/c/b.csv?sv=2022-11-02&se=2026-12-31&sp=rw&sig=qzPLANTsas",
      "https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=AIzaqzPLANTgoogle",
      "https://shop.example.test/cart;jsessionid=qzPLANTjsession/checkout",
      "https://shop.example.test/orders;jsessionid=qzPLANTjsession?page=1",
      "https://api.example.test/v1/login?redirect=https%3A%2F%2Fuser%3AqzPLANTencoded%40idp.example.test%2F",
      "https://api.example.test/v1/login?next=https://user:qzPLANTplain@idp.example.test/",
      "https://api.example.test/v1/login?next=https%3A%2F%2Fidp.example.test%2Fcb%3Faccess_token%3DqzPLANTnested",
  })
  void aCredentialInTheRequestUriIsNotJournaled(String uri) throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-order", Requests.postJson(uri, "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(201));
    try {
      h.executor.execute(op, t);
    } catch (IllegalArgumentException refused) {
      assertFalse(refused.getMessage().contains("qzPLANT"), refused.getMessage());
      assertTrue(h.journal.find(op.id()).isEmpty(), "refused, but journaled");
      assertEquals(0, t.count(), "refused, but sent");
      return;
    }
    String journaled = h.record(op).request().uri().toString();
    assertFalse(journaled.contains("qzPLANT"), "journaled in clear: " + journaled);
  }

  /** Messages and toString() name a request by scheme, host, port and path: the path's own credential too. */
  @ParameterizedTest
  @ValueSource(strings = {"https://shop.example.test/cart;jsessionid=qzPLANTjsession/checkout",
      "https://shop.example.test/orders;JSESSIONID=qzPLANTjsession"})
  void aMessageNamingTheRequestDoesNotShowAPathCredential(String uri) {
    String shown = RequestSnapshot.redactedUri(URI.create(uri));
    assertFalse(shown.contains("qzPLANT"), shown);
    String described = Requests.postJson(uri, "{}").toString();
    assertFalse(described.contains("qzPLANT"), described);
  }

  /** A stored Location: never sent again, so its credential is redacted, and what is not one is kept. */
  @ParameterizedTest
  @ValueSource(strings = {
      "https://acct.blob.core.windows.net/c/b.csv?sv=2022-11-02&se=2026-12-31&sp=r&sig=qzPLANTsas",
      "https://maps.googleapis.com/maps/api/staticmap?center=Paris&sp=r&key=AIzaqzPLANTgoogle",
      "/exports/1;jsessionid=qzPLANTjsession?sp=r",
      "/exports/1?sp=r&redirect=https%3A%2F%2Fuser%3AqzPLANTencoded%40idp.example.test%2F",
      "/exports/1?sp=r&next=https://user:qzPLANTplain@idp.example.test/",
      "/exports/1?sp=r&next=https%3A%2F%2Fidp.example.test%2Fcb%3Faccess_token%3DqzPLANTnested",
      "https://app.example.test/cb?sp=r#qzPLANTbareToken",
  })
  void aCredentialInAStoredLocationIsRedacted(String location) throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-export", Requests.order("{}")).build();
    ScriptedTransport t = h.transport(op).then(status(201, Map.of("Location", location)));

    h.executor.execute(op, t);

    List<String> stored = h.record(op).response().headers().get("location");
    assertFalse(stored.get(0).contains("qzPLANT"), "journaled in clear: " + stored);
    assertTrue(stored.get(0).contains("sp=r"), "what is no credential is kept: " + stored);
  }
}
