package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.testkit.TestClient.Answer;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * A request held by {@link Fault#slowProcessing} when the server is closed gets its connection cut
 * ("unexpected end of stream"), not the documented 503.
 *
 * <p>{@code Fault.slowProcessing}'s Javadoc: "Closing the server ends it, and the request then gets a
 * 503 without an effect." {@code IdempotencyDispatcher.process} does build that 503
 * ({@code urn:idem:problem:shutting-down}) once {@code closing} is counted down, but
 * {@code IdempotentServer.close()} calls {@code MockWebServer.close()} right after
 * {@code dispatcher.close()}, which closes the connections before the woken thread writes the 503.
 * The client sees an I/O error after sending the whole request: from its side an ambiguous failure
 * (maybe processed), the very case a test of "the server said 503, nothing happened" wants to rule out.
 */
class RvRtestkitSlowProcessingClose503Test {
  @Test
  void aSlowRequestCutShortByCloseIsAnswered503() throws Exception {
    IdempotentServer server = IdempotentServer.start();
    URI url = server.url("/orders");
    server.plan().next(Fault.slowProcessing(Duration.ofSeconds(30)));
    TestClient client = new TestClient(Duration.ofSeconds(60));
    CompletableFuture<Answer> call = CompletableFuture.supplyAsync(() -> {
      try {
        return client.post(url, "k-slow-close", "{\"sku\":\"A1\"}");
      } catch (java.io.IOException e) {
        return new Answer(-1, e.toString(), null, null, null, okhttp3.Headers.EMPTY);
      }
    });
    IdempotencyGuard guard = server.guard();
    // The request has claimed its key and waits in the fault.
    await(() -> ((InMemoryIdempotencyStore) guard.store()).size() == 1);

    server.close();

    Answer answer = call.get(10, TimeUnit.SECONDS);
    assertEquals(0, server.effectCount("k-slow-close"));
    assertEquals(503, answer.status(), "documented: the request then gets a 503; got " + answer.body());
  }

  // Waits for a state the server reaches on its own threads; no race is timed by it.
  private static void await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "timed out");
      Thread.sleep(5);
    }
  }
}
