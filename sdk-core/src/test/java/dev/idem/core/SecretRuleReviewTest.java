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
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Review of the nested-URL and path-parameter secret rule (UrlCredentials). */
class SecretRuleReviewTest {

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /**
   * An ordinary OAuth authorize call: redirect_uri is the app's callback, whose return_to is the
   * page to go back to, a search with a space in it. Each value is percent-encoded once, as any URL
   * builder does; there is no credential anywhere. Two real nestings, yet the walk decodes the
   * whole value to a fixpoint (each decoding costing a level) and runs out of its four levels, then
   * refuses the call claiming the URL "carries a credential".
   */
  @Test
  void aProperlyEncodedRedirectUriWithAReturnPathIsSentAndJournaledAsGiven() throws Exception {
    String returnTo = "/search?q=red%20shoes";
    String callback = "https://app.example.test/callback?return_to=" + encode(returnTo);
    String uri = "https://idp.example.test/oauth/authorize?client_id=shop&response_type=code&redirect_uri="
        + encode(callback);
    Harness h = new Harness();
    Operation op = Operation.builder("authorize", Requests.postJson(uri, "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(200));

    h.executor.execute(op, t);

    assertEquals(1, t.count(), "sent once");
    assertEquals(URI.create(uri), h.record(op).request().uri(), "journaled as given");
    assertEquals(OperationState.SUCCEEDED, h.record(op).state());
  }

  /**
   * The same shape with ordinary escaped values in the return path (a time, an accented word, a
   * comma): escapes of the innermost value are text, not one more URL, and cost no level.
   */
  @ParameterizedTest
  @ValueSource(strings = {"/agenda?at=10%3A00", "/menu?dish=caf%C3%A9", "/tags?any=a%2Cb"})
  void aRedirectUriWhoseReturnPathHasEscapedValuesIsSentAsGiven(String returnTo) throws Exception {
    String callback = "https://app.example.test/callback?return_to=" + encode(returnTo);
    String uri = "https://idp.example.test/oauth/authorize?client_id=shop&redirect_uri=" + encode(callback);
    Harness h = new Harness();
    Operation op = Operation.builder("authorize", Requests.postJson(uri, "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(200));

    h.executor.execute(op, t);

    assertEquals(1, t.count(), "sent once");
    assertEquals(URI.create(uri), h.record(op).request().uri(), "journaled as given");
  }

  /** {@code depth} URLs, each encoded once in the {@code n} (then {@code m}) parameter of the one above. */
  private static String nested(int depth, String innermostQuery) {
    String value = "/b?" + innermostQuery;
    for (int i = 1; i < depth; i++) {
      value = "/b?m=" + encode(value);
    }
    return "https://api.example.test/a?n=" + encode(value);
  }

  /**
   * Four properly encoded nested URLs are read to the end, escapes in the last one's values
   * included; a fifth is not read, and the refusal says so (not that a credential was found) and
   * names the way out.
   */
  @Test
  void fourNestedUrlsAreReadAndAFifthIsRefusedAsTooDeepToCheck() throws Exception {
    Harness h = new Harness();
    Operation four = Operation.builder("four", Requests.postJson(nested(4, "at=10%3A00"), "{}")).build();
    ScriptedTransport t = h.transport(four).then(status(200));
    h.executor.execute(four, t);
    assertEquals(1, t.count(), "four levels read and sent");

    Operation token = Operation.builder("token", Requests.postJson(nested(4, "access_token=planted"), "{}")).build();
    IllegalArgumentException found = assertThrows(IllegalArgumentException.class,
        () -> h.executor.execute(token, h.transport(token)));
    assertTrue(found.getMessage().contains("holds a URL that carries a credential"), found.getMessage());

    Operation five = Operation.builder("five", Requests.postJson(nested(5, "at=10%3A00"), "{}")).build();
    ScriptedTransport never = h.transport(five);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.executor.execute(five, never));
    assertTrue(e.getMessage().contains("query parameter 'n'"), e.getMessage());
    assertTrue(e.getMessage().contains("too deeply nested to check"), e.getMessage());
    assertFalse(e.getMessage().contains("carries a credential"), e.getMessage());
    assertTrue(e.getMessage().contains("allowQueryParameters(Set.of(\"n\"))"), e.getMessage());
    assertEquals(0, never.count());
  }

  /**
   * A JAX-RS matrix parameter (@MatrixParam("author")) is no credential. Path parameters were never
   * refused before; the new path walk reads them with the header rule's substring match, so
   * "author" matches "auth" and the call is refused.
   */
  @Test
  void aMatrixParameterNamedAuthorIsSentAndJournaledAsGiven() throws Exception {
    String uri = "https://library.example.test/books;author=tolkien;year=1954/reviews";
    Harness h = new Harness();
    Operation op = Operation.builder("post-review", Requests.postJson(uri, "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(201));

    h.executor.execute(op, t);

    assertEquals(1, t.count(), "sent once");
    assertEquals(URI.create(uri), h.record(op).request().uri(), "journaled as given");
  }

  /**
   * A stored Location whose query value is a percent-encoded URL carrying access_token, with one
   * stray '%' elsewhere in the same value (a server that did not encode "100%"). Lenient decoders
   * (OkHttp's HttpUrl, browsers, WHATWG URL, Python's unquote) decode every valid escape and keep
   * the stray one, so the token is live; UrlCredentials' decode gives up on the whole value at the
   * first malformed escape and then sees no nested URL, so the token is journaled in clear.
   */
  @Test
  void aNestedTokenIsRedactedInAStoredLocationEvenWithAStrayPercentInTheValue() throws Exception {
    String location = "https://app.example.test/done?next=https%3A%2F%2Fidp.example.test%2Fcb"
        + "%3Faccess_token%3Dplanted-token%26note%3D100%";
    Harness h = new Harness();
    Operation op = Operation.builder("create-export", Requests.order("{}")).build();
    ScriptedTransport t = h.transport(op).then(status(201, Map.of("Location", location)));

    h.executor.execute(op, t);

    List<String> stored = h.record(op).response().headers().get("location");
    assertFalse(stored.get(0).contains("planted-token"), "token journaled in clear: " + stored);
  }
}
