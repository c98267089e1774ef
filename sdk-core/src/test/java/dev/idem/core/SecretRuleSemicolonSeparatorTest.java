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
    Harness h = new Harness();
    Operation op = Operation.builder("create", Requests.postJson(uri, "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(200));

    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.executor.execute(op, t));

    assertTrue(e.getMessage().contains(where), e.getMessage());
    assertFalse(e.getMessage().contains("planted"), e.getMessage());
    assertEquals(0, t.count(), "never sent");
    assertTrue(h.journal.find(op.id()).isEmpty(), "nothing journaled");
    assertThrows(IllegalArgumentException.class, () -> h.executor.enqueue(op));
    assertTrue(h.journal.find(op.id()).isEmpty(), "nothing journaled by enqueue");
  }

  /** A URL nested in a value, whose receiver splits on {@code ;}, is read the same way. */
  @Test
  void aSemicolonSeparatedTokenInANestedUrlIsRefused() throws Exception {
    Harness h = new Harness();
    String uri = "https://api.example.test/login?next="
        + encode("https://idp.example.test/cb?state=s1;access_token=planted");
    Operation op = Operation.builder("login", Requests.postJson(uri, "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(200));

    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.executor.execute(op, t));

    assertTrue(e.getMessage().contains("query parameter 'next' holds a URL"), e.getMessage());
    assertEquals(0, t.count());
    assertTrue(h.journal.find(op.id()).isEmpty());
  }

  @Test
  void allowingTheNamedParameterLetsItThrough() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of("access_token")));
    String uri = "https://api.example.test/v1/orders?a=1;access_token=t1";
    Operation op = Operation.builder("create", Requests.postJson(uri, "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(200));

    h.executor.execute(op, t);

    assertEquals(1, t.count());
    assertEquals(URI.create(uri), h.record(op).request().uri());
  }

  /**
   * Allowing the pair's own name does not allow what follows a {@code ;} in its value: to a server
   * that splits on it, that is another parameter, which the app has not allowed.
   */
  @Test
  void allowingThePairsNameDoesNotAllowASeparatedSecretAfterIt() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of("a")));
    Operation op = Operation.builder("create",
        Requests.postJson("https://api.example.test/v1/orders?a=1;access_token=planted", "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(200));

    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.executor.execute(op, t));

    assertTrue(e.getMessage().contains("query parameter 'access_token'"), e.getMessage());
    assertEquals(0, t.count());
    assertTrue(h.journal.find(op.id()).isEmpty());
  }

  @Test
  void aStoredLocationHasASemicolonSeparatedSecretRedacted() throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-export", Requests.order("{}")).build();
    String location = "https://acct.blob.core.windows.net/c/b?sv=2022-11-02;sp=r;sig=planted-sig;se=2026&page=1";
    h.executor.execute(op, h.transport(op).then(status(201, Map.of("Location", location))));

    List<String> stored = h.record(op).response().headers().get("location");
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
    Harness h = new Harness();
    Operation op = Operation.builder("search", Requests.postJson(uri, "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(200));

    h.executor.execute(op, t);

    assertEquals(1, t.count(), "sent once");
    assertEquals(URI.create(uri), h.record(op).request().uri(), "journaled as given");
    assertEquals(OperationState.SUCCEEDED, h.record(op).state());
  }
}
