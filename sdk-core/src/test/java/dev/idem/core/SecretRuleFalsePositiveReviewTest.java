package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Review: ordinary requests the nested-URL walk of the secret rule (57fdc7f9) refused as carrying a
 * credential: a nested URL's parameter names judged by the header substring rule, a nested hash
 * route read as name=value pairs from its first character, and free text walked as a URL once it
 * held a '?' or ';'. Each must be sent once and journaled as given.
 */
class SecretRuleFalsePositiveReviewTest {

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
  }

  private static void sentAndJournaledAsGiven(String uri) throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create", Requests.postJson(uri, "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(200));

    h.executor.execute(op, t);

    assertEquals(1, t.count(), "sent once");
    assertEquals(URI.create(uri), h.record(op).request().uri(), "journaled as given");
    assertEquals(OperationState.SUCCEEDED, h.record(op).state());
  }

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
