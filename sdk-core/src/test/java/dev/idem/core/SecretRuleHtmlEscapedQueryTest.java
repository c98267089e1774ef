package dev.idem.core;

import static dev.idem.core.SecretRuleCalls.refusedOnEveryWayIn;
import static dev.idem.core.SecretRuleCalls.sentOnceAndJournaledAsGiven;
import static dev.idem.core.SecretRuleCalls.storedLocation;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.support.Harness;
import java.net.URI;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A URL copied from HTML keeps its {@code &amp;} separators ({@code ?sv=2022&amp;sig=...}): split
 * on {@code &}, its parameter is named {@code amp;sig}, which the exact name {@code sig} does not
 * match, and the signature would reach the journal. The rule reads such a name as the name after
 * {@code amp;}, in a request's URI and in a stored Location alike.
 */
class SecretRuleHtmlEscapedQueryTest {

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&amp;sp=r&amp;sig=planted|query parameter 'sig'",
      "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&amp;amp;sig=planted|query parameter 'sig'",
      "https://maps.example.test/geo?address=Paris&amp;KEY=planted|query parameter 'KEY'",
      "https://api.example.test/login?page=1&amp;next=https://u:planted@idp.example.test/|query parameter 'next' holds a URL",
      "https://api.example.test/login?page=1&next=%2Fcb%3Fa%3D1%26amp%3Bkey%3Dplanted|query parameter 'next' holds a URL",
  })
  void anHtmlEscapedSecretIsRefusedBeforeAnythingIsJournaledOrSent(String uri, String where) throws Exception {
    refusedOnEveryWayIn(new Harness(), "create", uri, where);
  }

  /** The message names the parameter the app allows; allowing it lets the escaped spelling through. */
  @Test
  void allowingTheNamedParameterLetsItsEscapedSpellingThrough() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of("sig")));
    sentOnceAndJournaledAsGiven(h, "create", "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&amp;sig=s1");
  }

  @Test
  void aStoredLocationHasAnEscapedSecretRedacted() throws Exception {
    String location = "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&amp;sp=r&amp;sig=planted-sig";
    List<String> stored = storedLocation(new Harness(), "create-export", location);
    assertEquals(List.of("https://acct.blob.core.windows.net/c/b?sv=2022-11-02&amp;sp=r&amp;sig=redacted"), stored);
  }

  /** Other names behind {@code amp;} are what they were: {@code amp;sp}, {@code amp;page} are kept. */
  @Test
  void anEscapedOrdinaryParameterIsSentAndJournaledAsGiven() throws Exception {
    sentOnceAndJournaledAsGiven(new Harness(), "create",
        "https://acct.blob.core.windows.net/c/b?sv=2022-11-02&amp;sp=r&amp;page=2&amp;keys=3");
  }
}
