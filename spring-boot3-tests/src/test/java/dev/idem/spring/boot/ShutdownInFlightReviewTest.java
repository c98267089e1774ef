package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.spring.client.IdempotentCall;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.Reply;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.RestClient;

/**
 * A graceful shutdown while a synchronous RestClient call (a scheduled job's, a message listener's:
 * not a web request, which the web server's graceful shutdown waits for) is on the wire.
 * IdempotentExecutor's Javadoc ("Threads and lifecycle") promises for synchronous executions in
 * progress at close: "an attempt on the wire runs to its end and is recorded; the call then stops
 * before its next attempt with OperationPendingException"; docs/spring.md: "the journal is flushed;
 * then the executor and the journal close", and IdemLifecycle "so that every outcome told to a
 * caller is durable before the executor and the journal close". But the starter closes the journal
 * bean right after the executor bean, and the executor's close does not wait for a synchronous
 * attempt without an attempt timeout (the default): the journal is closed under the attempt. Its
 * 201 is then never recorded, and the caller, whose request took effect, gets a journal failure.
 *
 * <p>Expected: the attempt's answer is recorded (the operation SUCCEEDED in the journal, one
 * attempt) and the caller gets its 201, or at least OperationPendingException; the journal closes
 * after its last writer. Before the fix: the journal keeps no attempt (IN_FLIGHT/PENDING) and the caller,
 * whose request took effect, gets "journal ... is closed [...: nothing was sent for this attempt]".
 *
 * <p>Found by a review on 2026-12-04.
 */
class ShutdownInFlightReviewTest {
  /**
   * Over the JDK client. The server answers while the context is closing: close waits (up to the
   * executor's 10 s grace) for the attempt on the wire, and the journal closes after it. (The
   * review first released the answer only after {@code close()} returned; no close that returns
   * before the answer can record it, and after a SIGTERM the JVM halts once close returns, so the
   * answer is released as soon as close is seen waiting, or once it returned, which before the fix
   * was at once.)
   */
  @Test
  void aSynchronousCallOnTheWireAtShutdownIsRecordedBeforeTheJournalCloses(@TempDir Path dir) throws Exception {
    closeWhileOnTheWire(dir, b -> b.requestFactory(new JdkClientHttpRequestFactory()));
  }

  /**
   * Over Boot's default connector (Reactor Netty here), whose resources stop in a later phase of
   * the close and kill the connection under an attempt (PrematureCloseException): Idem then retried
   * it during the shutdown, and the journal closed under the retry loop. The executor now closes
   * first: the attempt ends on a live connection, and no new attempt starts.
   */
  @Test
  void aCallOverBootsDefaultConnectorIsRecordedAndNotRetriedAtShutdown(@TempDir Path dir) throws Exception {
    closeWhileOnTheWire(dir, b -> b);
  }

  private static void closeWhileOnTheWire(Path dir, UnaryOperator<RestClient.Builder> connector) throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService caller = Executors.newSingleThreadExecutor();
    try (IdempotentServer server = IdempotentServer.builder().handler(request -> {
      entered.countDown();
      try {
        release.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return Reply.json(201, "{\"id\":1}");
    }).start()) {
      ConfigurableApplicationContext app = new SpringApplicationBuilder(TestApp.class).properties(
          "server.port=0",
          "idem.directory=" + dir.resolve("idem"),
          "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
          "idem.server.store=datasource").run();
      RestClient client = connector.apply(app.getBean(RestClient.Builder.class)).build();
      IdempotentCall call = IdempotentCall.named("create-order");
      CompletableFuture<Integer> status = CompletableFuture.supplyAsync(() -> client.post()
          .uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON).attributes(call)
          .body("{\"item\":\"book\"}").retrieve().toBodilessEntity().getStatusCode().value(), caller);
      assertTrue(entered.await(30, TimeUnit.SECONDS), "the call never reached the server");

      AtomicBoolean closeReturned = new AtomicBoolean();
      Thread answer = new Thread(() -> {
        // The server answers once the close waits for the attempt (or, before the fix, once the
        // close is over): a thread state, never a sleep.
        while (!closeReturned.get() && !closeIsWaiting()) {
          Thread.onSpinWait();
        }
        release.countDown();
      });
      answer.start();
      try {
        app.close(); // SIGTERM: the call is on the wire, its effect is being made
      } finally {
        closeReturned.set(true);
        answer.join();
      }

      Throwable failure = null;
      Integer answered = null;
      try {
        answered = status.get(30, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        failure = e.getCause();
      }
      assertEquals(1, server.effectCount(call.key().orElseThrow().value()));
      assertEquals(1, server.requestCount(), "an attempt was sent during the shutdown");

      OperationRecord record;
      try (JdbcJournal journal = JdbcJournal.openReadOnly(dir.resolve("idem").resolve("journal"))) {
        record = journal.find(new OperationId(OperationId.DEFAULT_SCOPE, "create-order", call.key().orElseThrow()))
            .orElseThrow();
      }
      assertEquals(1, record.attempts().size(),
          "the attempt that made the effect was never recorded (journal " + record.state() + ", " + record.attempts() + "); the caller got "
              + (failure != null ? failure : answered));
      assertEquals(OperationState.SUCCEEDED, record.state());
      assertEquals(201, answered, String.valueOf(failure));
    } finally {
      caller.shutdownNow();
    }
  }

  /** Whether a thread is in the executor's close, waiting for work in progress. */
  private static boolean closeIsWaiting() {
    for (Map.Entry<Thread, StackTraceElement[]> t : Thread.getAllStackTraces().entrySet()) {
      if (t.getKey().getState() != Thread.State.TIMED_WAITING) {
        continue;
      }
      for (StackTraceElement frame : t.getValue()) {
        if (frame.getClassName().equals("dev.idem.core.internal.ExecutorLifecycle")
            && frame.getMethodName().equals("awaitTasks")) {
          return true;
        }
      }
    }
    return false;
  }
}
