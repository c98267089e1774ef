package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.IdempotencyGuard;
import dev.idem.testkit.TestClient.Answer;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Closing the server while a {@link Fault#slowProcessing} request holds its key and a duplicate
 * waits for it ({@link IdempotentServer.Builder#inFlightWait}) runs the effect during close().
 *
 * <p>Documented: "Closing the server ends it, and the request then gets a 503 without an effect."
 * What happens: close() wakes the slow request ({@code IdempotencyDispatcher.close}), which answers
 * 503 and abandons its claim; the guard then wakes the waiting duplicate, which claims the key and
 * runs the handler while the server is being closed (its client then gets the connection cut, not
 * the 201: the effect exists and nobody was told) ({@code IdempotentServer.close} closes the
 * guard only after MockWebServer, in its finally block). So a test that stops the server to cut a
 * slow operation short sees an effect it never let happen, and the client gets a 201 from a server
 * that is shutting down: the effect count a test asserts after close() is wrong.
 */
class RvRtestkitCloseRunsWaitingDuplicateTest {
  /**
   * A thread per task: these tasks block until each other's progress, and from JDK 25 on the
   * default async pool of a 2-CPU machine (parallelism 1) runs them one after the other.
   */
  private static final java.util.concurrent.Executor THREAD_PER_TASK = task -> new Thread(task).start();

  @Test
  void aDuplicateWaitingForASlowRequestRunsNoEffectWhenTheServerCloses() throws Exception {
    IdempotentServer server = IdempotentServer.builder().inFlightWait(Duration.ofSeconds(30)).start();
    URI url = server.url("/orders");
    server.plan().forKey("k-close", Fault.slowProcessing(Duration.ofSeconds(30)));
    TestClient client = new TestClient(Duration.ofSeconds(60));
    CompletableFuture<Answer> first = CompletableFuture.supplyAsync(() -> post(client, url), THREAD_PER_TASK);
    IdempotencyGuard guard = server.guard();
    // The first request has claimed its key (the guard's store holds its record).
    await(() -> ((dev.idem.server.InMemoryIdempotencyStore) guard.store()).size() == 1);
    CompletableFuture<Answer> duplicate = CompletableFuture.supplyAsync(() -> post(client, url), THREAD_PER_TASK);
    await(() -> server.requestCount() == 2);

    server.close();

    Answer a = first.get(10, TimeUnit.SECONDS);
    Answer b = duplicate.get(10, TimeUnit.SECONDS);
    assertEquals(0, server.effectCount("k-close"),
        "no effect may run once close() cut the slow request short; the first got " + a.status() + " " + a.body()
            + ", the duplicate " + b.status() + " " + b.body());
    assertEquals(503, a.status(), "the slow request is answered the shutting-down 503: " + a.body());
    // The duplicate is admitted after close() began: the same 503, or its connection cut if the
    // sockets closed first (-1), never the handler's 201.
    assertTrue(b.status() == 503 || b.status() == -1, "the duplicate got " + b.status() + " " + b.body());
  }

  private static Answer post(TestClient client, URI url) {
    try {
      return client.post(url, "k-close", "{\"sku\":\"A1\"}");
    } catch (java.io.IOException e) {
      return new Answer(-1, e.toString(), null, null, null, okhttp3.Headers.EMPTY);
    }
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
