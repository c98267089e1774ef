package dev.idem.core;

import static dev.idem.core.SecretRuleCalls.refusedNothingSentOrJournaled;
import static dev.idem.core.SecretRuleCalls.sentOnceAndJournaledAsGiven;
import static dev.idem.core.SecretRuleCalls.storedLocation;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Harness;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code allowQueryParameters} matches names as the secret rule does: in any case. The rule refuses
 * {@code ?sig=}, {@code ?SIG=} and {@code ?Sig=} alike, so an allow of one spelling must let the
 * others through, or an app that allowed its name still has its calls refused.
 */
class SecretRuleAllowCaseTest {

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "Sig|https://a.blob.core.windows.net/c/b?sv=2022-11-02&sp=rw&sig=s1",
      "SIG|https://a.blob.core.windows.net/c/b?sv=2022-11-02&sp=rw&sig=s1",
      "sig|https://a.blob.core.windows.net/c/b?sv=2022-11-02&sp=rw&SIG=s1",
      "key|https://maps.example.test/geo?address=Paris&Key=k1",
      "Access_Token|https://api.example.test/v1/orders?access_token=t1",
      "JSESSIONID|https://shop.example.test/cart;jsessionid=j1/items",
      "Next|https://api.example.test/login?next=https://u:p1@idp.example.test/",
  })
  void anAllowedNameIsAllowedInAnyCase(String allowed, String uri) throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of(allowed)));
    OperationRecord record = sentOnceAndJournaledAsGiven(h, "create", uri);
    assertEquals(OperationState.SUCCEEDED, record.state());
  }

  /** An allow names one parameter in any case, not others: a second secret is still refused. */
  @Test
  void anAllowInAnotherCaseAllowsThatNameOnly() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of("SIG")));

    IllegalArgumentException e = refusedNothingSentOrJournaled(h, "create",
        "https://a.blob.core.windows.net/c/b?sig=s1&access_token=planted");

    assertTrue(e.getMessage().contains("query parameter 'access_token'"), e.getMessage());
  }

  /** A stored Location keeps an allowed name in clear in any case too, as the request check does. */
  @Test
  void aStoredLocationKeepsAnAllowedNameInAnyCase() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of("Sig")));
    String location = "https://a.blob.core.windows.net/c/b?sv=2022-11-02&sig=s1&SIG=s2&token=planted";
    List<String> stored = storedLocation(h, "create-export", location);
    assertEquals(List.of("https://a.blob.core.windows.net/c/b?sv=2022-11-02&sig=s1&SIG=s2&token=redacted"), stored);
    assertFalse(stored.get(0).contains("planted"));
  }
}
