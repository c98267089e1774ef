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
 * Review: a nested URL's parameter names are judged by the header substring rule, which refuses
 * ordinary callback URLs that were accepted before the nested rule (57fdc7f9).
 */
class SecretRuleNestedNamesReviewTest {

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
}
