package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A credential in the query string must never be quoted by Idem: the executor refuses such a URI
 * "naming the parameter (never its value)", and the decorator's own REJECT message uses "the path
 * only: a query string may carry what the app considers secret". The body-size refusal quotes the
 * whole URI, credential included, in an exception apps log.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class QuerySecretInMessageTest {
  @ParameterizedTest
  @EnumSource(Mode.class)
  void aRefusedBodyDoesNotQuoteTheQueryStringsCredential(Mode mode) throws Exception {
    Fixture f = new Fixture(b -> { }, c -> c.maxBodyBytes(8));
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/orders?api_key=sk_live_s3cr3t"))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"too-long\"}")).build();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> mode.send(f, f.client.operation("create-order"), request, BodyHandlers.ofString()));
    assertFalse(e.getMessage().contains("sk_live_s3cr3t"), "the credential is in the message: " + e.getMessage());
  }
}
