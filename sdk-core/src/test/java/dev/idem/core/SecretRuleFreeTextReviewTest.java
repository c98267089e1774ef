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
 * Review: a query value that is free text, not a URL, is walked as a URL once it holds a '?' or ';'.
 */
class SecretRuleFreeTextReviewTest {

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
   * Free text is walked as a URL as soon as it holds a '?' or ';': a search for a sentence with a
   * question mark, or a sort spec with a ';', is refused as "a URL that carries a credential".
   */
  @ParameterizedTest
  @ValueSource(strings = {"Why is my session slow? auth=ldap", "name;key=asc"})
  void freeTextWithAQuestionMarkOrSemicolonIsSentAsGiven(String text) throws Exception {
    sentAndJournaledAsGiven("https://support.example.test/tickets?subject=" + encode(text));
  }
}
