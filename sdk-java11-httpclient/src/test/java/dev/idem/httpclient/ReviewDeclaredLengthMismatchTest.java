package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationId;
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
 * if whole, and the server creates an effect from it. The opposite (declares 5, publishes 18: the
 * length is stale) is refused by the JDK client too ("Too many bytes in request body"), and Idem
 * sent all 18 bytes. Either way the keyed call must fail with an IOException, as the JDK client's
 * does, before anything is journaled (for {@code enqueue}, too) or sent.
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

  private static HttpRequest overlong(URI url) {
    // Declares 5 bytes, publishes 18: the declared length is stale (the file grew after its size was read).
    return HttpRequest.newBuilder(url)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofString("{\"amount\": 100, \"n"), 5))
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

  @Test
  void theJdkClientRefusesABodyLongerThanItsDeclaredLength() throws Exception {
    IdempotentServer server = serverExtension.server();
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> Fixture.JDK.sendAsync(overlong(server.url("/orders")), BodyHandlers.ofString()).get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof IOException, "the baseline: " + e.getCause());
    assertEquals(0, server.totalEffects(), "the baseline: no effect from a request longer than it said");
  }

  @Test
  void aKeyedCallWithABodyLongerThanItsDeclaredLengthIsRefusedBeforeTheJournal() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    OperationCall call = f.client.operation("create-order");
    OperationId id = call.operationId();
    IOException e = assertThrows(IOException.class, () -> call.send(overlong(server.url("/orders")), BodyHandlers.ofString()),
        () -> "a body publisher that declared 5 bytes and published 18 was sent; effects at the server: "
            + server.totalEffects() + ", journaled: " + journaled(f, id));
    assertTrue(e.getMessage().contains("declared 5"), e.getMessage());
    assertEquals(0, server.requestCount(), "nothing sent");
    assertTrue(f.executor.find(id).isEmpty(), "nothing journaled");
  }

  @Test
  void aKeyedCallWithABodyShorterThanItsDeclaredLengthIsRefusedWithAnIoExceptionBeforeTheJournal() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    OperationCall call = f.client.operation("create-order");
    OperationId id = call.operationId();
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> call.sendAsync(cutShort(server.url("/orders")), BodyHandlers.ofString()).get(10, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof IOException, "as from the JDK client: " + e.getCause());
    assertTrue(e.getCause().getMessage().contains("declared 100"), e.getCause().getMessage());
    assertEquals(0, server.requestCount(), "nothing sent");
    assertTrue(f.executor.find(id).isEmpty(), "nothing journaled");
  }

  @Test
  void anEnqueuedCallWithABodyShorterThanItsDeclaredLengthIsNotJournaled() throws Exception {
    Fixture f = new Fixture();
    OperationCall call = f.client.operation("create-order");
    OperationId id = call.operationId();
    assertThrows(IOException.class, () -> call.enqueue(cutShort(serverExtension.server().url("/orders"))),
        () -> "journaled: " + journaled(f, id));
    assertTrue(f.executor.find(id).isEmpty(), "nothing journaled for the outbox to deliver");
  }

  private static String journaled(Fixture f, OperationId id) {
    try {
      return f.executor.find(id).map(r -> r.state() + " with " + r.request().bodyLength() + " body bytes")
          .orElse("nothing");
    } catch (IdempotencyException e) {
      return "unknown (" + e + ")";
    }
  }
}
