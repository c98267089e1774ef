package dev.idem.core;

import static dev.idem.core.SecretRuleCalls.sentOnceAndJournaledAsGiven;
import static dev.idem.core.SecretRuleCalls.storedLocation;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Review of the nested-URL and path-parameter secret rule (UrlCredentials): what it must refuse or
 * redact, and the ordinary requests it must send as given.
 */
class SecretRuleReviewTest {

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** Sends {@code uri} as an operation whose server answers {@code status}, and checks it went once, as given. */
  private static void sentAndJournaledAsGiven(String uri, int status) throws Exception {
    OperationRecord record = sentOnceAndJournaledAsGiven(new Harness(), "create", uri, status);
    assertEquals(OperationState.SUCCEEDED, record.state());
  }

  private static void sentAndJournaledAsGiven(String uri) throws Exception {
    sentAndJournaledAsGiven(uri, 200);
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
    sentAndJournaledAsGiven(uri);
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
    sentAndJournaledAsGiven(uri);
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
    sentAndJournaledAsGiven(uri, 201);
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
    List<String> stored = storedLocation(new Harness(), "create-export", location);
    assertFalse(stored.get(0).contains("planted-token"), "token journaled in clear: " + stored);
  }

  // Ordinary requests the first nested walk refused: a nested URL's names judged by the header
  // substring rule, a nested hash route read as pairs from its first character, free text walked
  // as a URL. Each is sent once and journaled as given.


  /**
   * Stripe Checkout's documented success_url: {@code session_id={CHECKOUT_SESSION_ID}} is a
   * template the provider fills in later; the request carries no session id at all, yet the nested
   * query's {@code session_id} matches the header substring rule ("session").
   */
  @ParameterizedTest
  @ValueSource(strings = {
      "https://shop.example.test/success?session_id={CHECKOUT_SESSION_ID}",
      "https://shop.example.test/order/complete?sessionId={CHECKOUT_SESSION_ID}"})
  void aCheckoutSuccessUrlWithAPlaceholderIsSentAsGiven(String successUrl) throws Exception {
    sentAndJournaledAsGiven("https://pay.example.test/v1/checkout/sessions?mode=payment&success_url="
        + encode(successUrl) + "&cancel_url=" + encode("https://shop.example.test/cart"));
  }

  /**
   * The nested walk applies the header substring rule to a nested URL's parameter names, so an
   * OAuth redirect_uri whose return path is a page filtered by {@code author} (contains "auth") or
   * an {@code oauth_provider} hint is refused. 6479add0 exempted exactly this from the path rule
   * (";author= is ordinary, and path parameters were never refused before the rule read them");
   * a nested URL's parameters were never refused before the rule read them either.
   */
  @ParameterizedTest
  @ValueSource(strings = {"/books?author=tolkien", "/login?oauth_provider=google", "/talks?session=2"})
  void aRedirectUriWhoseReturnPathHasAnOrdinaryParameterIsSentAsGiven(String returnTo) throws Exception {
    String callback = "https://app.example.test/callback?return_to=" + encode(returnTo);
    sentAndJournaledAsGiven("https://idp.example.test/oauth/authorize?client_id=shop&redirect_uri=" + encode(callback));
  }

  /**
   * A hash-routed single-page app's return URL (Angular/Vue hash mode): the fragment is a route
   * with its own query. The walk reads a nested URL's fragment as name=value pairs from its first
   * character, so the "name" of the first pair is the route itself ({@code /auth/callback?x},
   * {@code /tokens?page}, {@code /password/reset?step}) and the substring rule matches the route's
   * path. No parameter of that name exists; nothing here is a credential.
   */
  @ParameterizedTest
  @ValueSource(strings = {
      "https://app.example.test/#/auth/callback?provider=google",
      "https://app.example.test/#/account/tokens?page=2",
      "https://app.example.test/#/password/reset?step=2",
      "https://app.example.test/#/sessions/42?tab=notes"})
  void aHashRoutedReturnUrlIsSentAsGiven(String returnUrl) throws Exception {
    sentAndJournaledAsGiven("https://pay.example.test/v1/payments?amount=100&return_url=" + encode(returnUrl));
  }

  /**
   * Free text is walked as a URL as soon as it holds a '?' or ';': a search for a sentence with a
   * question mark, or a sort spec with a ';', is refused as "a URL that carries a credential".
   */
  @ParameterizedTest
  @ValueSource(strings = {"Why is my session slow? auth=ldap", "name;key=asc"})
  void freeTextWithAQuestionMarkOrSemicolonIsSentAsGiven(String text) throws Exception {
    sentAndJournaledAsGiven("https://support.example.test/tickets?subject=" + encode(text));
  }
}
