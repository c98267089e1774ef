package dev.idem.core;

import static dev.idem.core.SecretRuleCalls.refusedNothingSentOrJournaled;
import static dev.idem.core.SecretRuleCalls.refusedOnEveryWayIn;
import static dev.idem.core.SecretRuleCalls.sentOnceAndJournaledAsGiven;
import static dev.idem.core.SecretRuleCalls.storedLocation;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Harness;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code ;} as a query separator: older servlet containers, Rails and Perl's CGI split
 * {@code ?a=1;access_token=...} into {@code a} and {@code access_token}, so the token is a live
 * credential even though, split on {@code &} only, it is part of {@code a}'s value. The rule reads
 * a {@code ;}-separated {@code NAME=value} whose name it names; any other {@code ;} in a value is
 * text and the request is sent as given.
 */
class SecretRuleSemicolonSeparatorTest {

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "https://api.example.test/v1/orders?a=1;access_token=planted|query parameter 'access_token'",
      "https://api.example.test/v1/orders?a;sig=planted|query parameter 'sig'",
      "https://acct.blob.core.windows.net/c/b?sv=2022-11-02;sp=r;sig=planted;se=2026|query parameter 'sig'",
      "https://maps.example.test/geo?address=Paris;KEY=planted&page=2|query parameter 'KEY'",
      "https://api.example.test/v1/orders?page=2&a=1;x=2;api_key=planted|query parameter 'api_key'",
  })
  void aSemicolonSeparatedSecretIsRefusedBeforeAnythingIsJournaledOrSent(String uri, String where)
      throws Exception {
    refusedOnEveryWayIn(new Harness(), "create", uri, where);
  }

  /** A URL nested in a value, whose receiver splits on {@code ;}, is read the same way. */
  @Test
  void aSemicolonSeparatedTokenInANestedUrlIsRefused() throws Exception {
    String uri = "https://api.example.test/login?next="
        + encode("https://idp.example.test/cb?state=s1;access_token=planted");

    IllegalArgumentException e = refusedNothingSentOrJournaled(new Harness(), "login", uri);

    assertTrue(e.getMessage().contains("query parameter 'next' holds a URL"), e.getMessage());
  }

  @Test
  void allowingTheNamedParameterLetsItThrough() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of("access_token")));
    sentOnceAndJournaledAsGiven(h, "create", "https://api.example.test/v1/orders?a=1;access_token=t1");
  }

  /**
   * Allowing the pair's own name does not allow what follows a {@code ;} in its value: to a server
   * that splits on it, that is another parameter, which the app has not allowed.
   */
  @Test
  void allowingThePairsNameDoesNotAllowASeparatedSecretAfterIt() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of("a")));

    IllegalArgumentException e = refusedNothingSentOrJournaled(h, "create",
        "https://api.example.test/v1/orders?a=1;access_token=planted");

    assertTrue(e.getMessage().contains("query parameter 'access_token'"), e.getMessage());
  }

  @Test
  void aStoredLocationHasASemicolonSeparatedSecretRedacted() throws Exception {
    String location = "https://acct.blob.core.windows.net/c/b?sv=2022-11-02;sp=r;sig=planted-sig;se=2026&page=1";
    List<String> stored = storedLocation(new Harness(), "create-export", location);
    assertEquals(List.of("https://acct.blob.core.windows.net/c/b?sv=2022-11-02;sp=r;sig=redacted;se=2026&page=1"),
        stored);
  }

  /**
   * A {@code ;} in a value is text unless what follows it is {@code NAME=value} with a name the rule
   * names: a list, a sort spec, a bare word, an empty value, a name with no value.
   */
  @ParameterizedTest
  @ValueSource(strings = {
      "https://api.example.test/v1/search?q=a;b",
      "https://api.example.test/v1/search?q=a;b=c&page=2",
      "https://api.example.test/v1/search?ids=1;2;3",
      "https://api.example.test/v1/search?sort=name;order=asc;limit=10",
      "https://api.example.test/v1/search?q=a;;=x;access_token;sig=",
      "https://api.example.test/v1/search?q=a%3Baccess_token%3Dencoded-is-text",
      "https://api.example.test/v1/login?next=%2Fsearch%3Fq%3Da%3Bb%3Dc",
  })
  void anOrdinarySemicolonInAValueIsSentAndJournaledAsGiven(String uri) throws Exception {
    OperationRecord record = sentOnceAndJournaledAsGiven(new Harness(), "search", uri);
    assertEquals(OperationState.SUCCEEDED, record.state());
  }
}
