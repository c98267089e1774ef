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
import java.util.List;
import java.util.Map;
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
    Operation op = Operation.builder("create", Requests.postJson(uri, "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(200));

    h.executor.execute(op, t);

    assertEquals(1, t.count(), "sent once");
    assertEquals(URI.create(uri), h.record(op).request().uri(), "journaled as given");
    assertEquals(OperationState.SUCCEEDED, h.record(op).state());
  }

  /** An allow names one parameter in any case, not others: a second secret is still refused. */
  @Test
  void anAllowInAnotherCaseAllowsThatNameOnly() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of("SIG")));
    Operation op = Operation.builder("create",
        Requests.postJson("https://a.blob.core.windows.net/c/b?sig=s1&access_token=planted", "{}")).build();
    ScriptedTransport t = h.transport(op).then(status(200));

    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> h.executor.execute(op, t));

    assertTrue(e.getMessage().contains("query parameter 'access_token'"), e.getMessage());
    assertEquals(0, t.count());
    assertTrue(h.journal.find(op.id()).isEmpty());
  }

  /** A stored Location keeps an allowed name in clear in any case too, as the request check does. */
  @Test
  void aStoredLocationKeepsAnAllowedNameInAnyCase() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of("Sig")));
    Operation op = Operation.builder("create-export", Requests.order("{}")).build();
    String location = "https://a.blob.core.windows.net/c/b?sv=2022-11-02&sig=s1&SIG=s2&token=planted";
    h.executor.execute(op, h.transport(op).then(status(201, Map.of("Location", location))));

    List<String> stored = h.record(op).response().headers().get("location");
    assertEquals(List.of("https://a.blob.core.windows.net/c/b?sv=2022-11-02&sig=s1&SIG=s2&token=redacted"), stored);
    assertFalse(stored.get(0).contains("planted"));
  }
}
