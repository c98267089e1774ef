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
 * Review: a nested URL's fragment that is a single-page app route with its own query is read as
 * name=value pairs from its first character, so the route path becomes a "parameter name".
 */
class SecretRuleHashRouteReviewTest {

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
}
