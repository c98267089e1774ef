package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A body publisher that declares a length ({@code BodyPublishers.fromPublisher(p, 100)}, an upload
 * of a file whose size was read first, a proxy forwarding a client's Content-Length) and then
 * publishes fewer bytes: the stream was cut short. The JDK client refuses to complete such a request
 * ("Too few bytes returned by the publisher"): the server never gets a whole request, and nothing
 * takes effect. Idem reads the publisher into bytes and sends whatever it got as a complete
 * {@code ofByteArray} body of the shorter length: the truncated payload is journaled and sent as
 * if whole, and the server creates an effect from it.
 */
class ReviewDeclaredLengthMismatchTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  private static HttpRequest cutShort(URI url) {
    // Declares 100 bytes, publishes 18: the tail of the upload never came.
    return HttpRequest.newBuilder(url)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofString("{\"amount\": 100, \"n"), 100))
        .build();
  }

  @Test
  void theJdkClientRefusesABodyShorterThanItsDeclaredLength() throws Exception {
    IdempotentServer server = serverExtension.server();
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> Fixture.JDK.sendAsync(cutShort(server.url("/orders")), BodyHandlers.ofString()).get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof IOException, "the baseline: " + e.getCause());
    assertEquals(0, server.totalEffects(), "the baseline: no effect from a request cut short");
  }

  @Test
  void aKeyedCallWithABodyShorterThanItsDeclaredLengthSendsNothing() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    OperationCall call = f.client.operation("create-order");
    try {
      call.send(cutShort(server.url("/orders")), BodyHandlers.ofString());
    } catch (IOException | RuntimeException expected) {
      // refused: fine, as long as nothing reached the server
    }
    assertEquals(0, server.requestCount(), "a body publisher that declared 100 bytes and published 18 was sent as"
        + " an 18-byte request; effects at the server: " + server.totalEffects() + ", journaled: "
        + f.executor.find(call.operationId()).map(r -> r.state() + " with " + r.request().bodyLength() + " body bytes")
            .orElse("nothing"));
  }
}
