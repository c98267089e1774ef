package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.support.Harness;
import dev.idem.core.support.ScriptedTransport;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A request's own header that carries a URL (a {@code Referer} copied from the page that started
 * the call, a {@code Link}) with a credential in it: it reaches the wire on every live attempt, but
 * not the journal, where it was kept in clear before (only secret-named headers were left out; the
 * response's copies of these headers were already redacted). Left out whole, as a secret-named
 * header is, since what is journaled is what a resume sends.
 */
class SecretRequestUrlHeaderTest {
  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource(delimiter = '|', value = {
      "Referer | https://app.example/callback?code=1&access_token=planted-1",
      "referer | https://app.example/cb?state=x&next=https%3A%2F%2Fidp%2Fcb%3Ftoken%3Dplanted-2",
      "Referer | https://user:planted-3@app.example/",
      "Referer | https://app.example/cart;jsessionid=planted-4",
      "Referer | https://app.example/cb#access_token=planted-5",
      "Link | <https://api.example/items?page=2&access_token=planted-6>; rel=\"next\"",
      "Content-Location | /orders/42?sig=planted-7",
      "Refresh | 0; url=https://app.example/?api_key=planted-8"})
  void aUrlHeaderWithACredentialIsSentButNotJournaled(String name, String value) throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-order", request(name, value)).build();
    ScriptedTransport t = h.transport(op).then(status(200));

    h.executor.execute(op, t);

    assertEquals(Set.of("x-request-source"), h.record(op).request().headers().keySet(),
        "journaled without the header");
    assertFalse(h.record(op).request().toString().contains("planted"), h.record(op).request().toString());
    assertEquals(List.of(value), t.sent().get(0).request().headers().get(name.toLowerCase(java.util.Locale.ROOT)),
        "sent as given");
  }

  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource(delimiter = '|', value = {
      "Referer | https://app.example/orders?page=2&sort=date",
      "Referer | https://app.example/books;author=tolkien",
      "Link | <https://api.example/items?page=2>; rel=\"next\"",
      "Refresh | 5"})
  void aUrlHeaderWithoutACredentialIsJournaledAsGiven(String name, String value) throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-order", request(name, value)).build();

    h.executor.execute(op, h.transport(op).then(status(200)));

    assertEquals(List.of(value), h.record(op).request().headers().get(name.toLowerCase(java.util.Locale.ROOT)));
  }

  /** The app's two ways to keep it: allow the header by name, or the parameter. */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"allowHeaders", "allowQueryParameters"})
  void theAppCanKeepItInClear(String how) throws Exception {
    Consumer<IdempotentExecutor.Builder> allow = how.equals("allowHeaders")
        ? b -> b.allowHeaders(Set.of("REFERER")) : b -> b.allowQueryParameters(Set.of("access_token"));
    Harness h = new Harness(Harness.POLICY, allow);
    String value = "https://app.example/cb?access_token=allowed-1";
    Operation op = Operation.builder("create-order", request("Referer", value)).build();

    h.executor.execute(op, h.transport(op).then(status(200)));

    assertEquals(List.of(value), h.record(op).request().headers().get("referer"));
  }

  /** A later value with a credential leaves the whole header out: one list, one decision. */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"Link"})
  void anyValueWithACredentialLeavesTheHeaderOut(String name) throws Exception {
    Harness h = new Harness();
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example.com/v1/orders"))
        .header(name, "<https://api.example/a>; rel=\"up\"")
        .header(name, "<https://api.example/b?token=planted-9>; rel=\"next\"")
        .body("{}".getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
    Operation op = Operation.builder("create-order", request).build();

    h.executor.execute(op, h.transport(op).then(status(200)));

    assertTrue(h.record(op).request().headers().isEmpty(), h.record(op).request().headers().toString());
  }

  private static RequestSnapshot request(String name, String value) {
    return RequestSnapshot.builder("POST", URI.create("https://api.example.com/v1/orders"))
        .header(name, value)
        .header("X-Request-Source", "checkout")
        .body("{}".getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
  }
}
