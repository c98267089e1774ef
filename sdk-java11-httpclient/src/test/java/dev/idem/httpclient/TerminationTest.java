package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.httpclient.internal.Lifecycle;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Java 21+: {@link IdempotentHttpClient#isTerminated()} and
 * {@link IdempotentHttpClient#awaitTermination(Duration)} asked only the app's client. When that
 * client follows redirects or has an authenticator, keyed attempts go through the Idem client's
 * own twin (see {@code KeyedClient}), which the app's client knows nothing of: an app that shuts
 * the Idem client down and waits for it to terminate (before closing its journal, say) was told
 * "terminated" while a keyed exchange on the twin was still running, and whose end the executor
 * still had to record. The same held for a blocking keyed call still in progress (waiting out a
 * backoff, to end PENDING), with or without a twin.
 *
 * <p>And the lifecycle methods (shutdown, shutdownNow, close) stopped only a twin built already:
 * one built afterwards (by a resume through {@link IdempotentHttpClient#resumeTransport()}, or a
 * keyed call racing the stop) was never stopped, and sent requests for a client that was shut down
 * or closed.
 *
 * <p>Fixed by answering for the whole Idem client: its keyed calls in progress, the app's client
 * and the twin (see {@link IdempotentHttpClient#awaitTermination(Duration)}), and by giving a twin
 * built after a stop that stop as it is built.
 *
 * <p>Run with {@code JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 mvn -B -q -o -pl
 * sdk-java11-httpclient -am test -Dtest=TerminationTest -Dsurefire.failIfNoSpecifiedTests=false}.
 *
 * <p>Found by a review on 2026-12-05.
 */
class TerminationTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  /**
   * A keyed exchange the server never answers is on the twin when the app shuts the Idem client
   * down (which lets submitted requests run to completion): the app's client, idle, terminates,
   * but the Idem client has not, until {@code shutdownNow()} aborts the exchange.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(Mode.class)
  @EnabledForJreRange(min = JRE.JAVA_21)
  void aKeyedExchangeOnTheTwinKeepsTheClientFromTerminating(Mode mode) throws Exception {
    try (EndlessBodyServer server = new EndlessBodyServer(0, false)) { // never answers its first request
      HttpClient own = following();
      Fixture f = new Fixture();
      IdempotentHttpClient client = IdempotentHttpClient.builder(own).idempotentExecutor(f.executor).build();
      try {
        assertTerminatesOnlyOnceTheExchangeEnds(mode, server, own, f, client);
      } finally {
        client.shutdownNow(); // a failed assertion leaves no exchange hanging
      }
    }
  }

  private static void assertTerminatesOnlyOnceTheExchangeEnds(Mode mode, EndlessBodyServer server, HttpClient own,
      Fixture f, IdempotentHttpClient client) throws Exception {
    OperationCall call = client.operation("create-order");
    OperationId id = call.operationId();
    HttpRequest request = HttpRequest.newBuilder(server.url("/orders")).timeout(Duration.ofMinutes(1))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{}")).build();
    CompletableFuture<?> sent = mode == Mode.ASYNC ? call.sendAsync(request, BodyHandlers.ofString())
        : onItsOwnThread(() -> call.send(request, BodyHandlers.ofString()));
    assertTrue(server.received.await(5, TimeUnit.SECONDS), "the attempt reached the server");

    client.shutdown();
    assertTrue(awaitTermination(own, Duration.ofSeconds(5)), "the app's client, idle, terminates");

    assertFalse(client.isTerminated(), "a keyed exchange is still running on the twin");
    assertFalse(client.awaitTermination(Duration.ZERO), "a keyed exchange is still running on the twin");

    client.shutdownNow(); // aborts the exchange on the twin
    assertTrue(client.awaitTermination(Duration.ofSeconds(10)), "the exchange was aborted");
    assertTrue(client.isTerminated());
    assertTrue(server.clientClosed.await(5, TimeUnit.SECONDS), "the twin gave the exchange up");

    Exception told = assertThrows(Exception.class, () -> f.await(sent));
    assertTrue(told instanceof OperationPendingException, String.valueOf(told));
    OperationRecord record = awaitAttempts(f, id, 1);
    assertEquals(OperationState.PENDING, record.state(), "attempts: " + record.attempts());
  }

  /**
   * A blocking keyed call waiting out its backoff when the app shuts the Idem client down is still
   * this client's call in progress (the shutdown wakes it, and it ends PENDING once its executor
   * has written the journal): the client has not terminated until it returns.
   */
  @ParameterizedTest(name = "twin: {0}")
  @EnumSource(Twin.class)
  @EnabledForJreRange(min = JRE.JAVA_21)
  void aBlockingKeyedCallWaitingOutItsBackoffKeepsTheClientFromTerminating(Twin twin) throws Exception {
    IdempotentServer server = serverExtension.server();
    server.plan().next(Fault.status(503));
    HttpClient own = twin.client();
    AtomicReference<IdempotentHttpClient> client = new AtomicReference<>();
    AtomicReference<String> duringBackoff = new AtomicReference<>();
    // The executor's sleeper runs this on the calling thread as the backoff begins. The shutdown
    // wakes that backoff with an interrupt of this thread: set aside while the checks wait, then
    // put back for the sleeper, which ends the backoff on it as a woken sleep would.
    Fixture f = new Fixture(b -> { }, c -> { }, delay -> {
      client.get().shutdown();
      boolean woken = Thread.interrupted();
      boolean ownTerminated = awaitTermination(own, Duration.ofSeconds(5));
      duringBackoff.set("woken: " + woken + ", app's client terminated: " + ownTerminated + ", isTerminated: "
          + client.get().isTerminated() + ", awaitTermination(0): " + client.get().awaitTermination(Duration.ZERO));
      if (woken) {
        Thread.currentThread().interrupt();
      }
    }, null);
    client.set(IdempotentHttpClient.builder(own).idempotentExecutor(f.executor).build());
    OperationCall call = client.get().operation("create-order");

    assertThrows(OperationPendingException.class,
        () -> call.send(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString()));

    assertEquals("woken: true, app's client terminated: true, isTerminated: false, awaitTermination(0): false",
        duringBackoff.get(), "the keyed call was still in progress");
    assertTrue(client.get().awaitTermination(Duration.ofSeconds(10)), "the call returned");
    assertTrue(client.get().isTerminated());
    assertEquals(OperationState.PENDING, f.record(call.operationId()).state());
  }

  /**
   * The twin is built on first use. One built after the Idem client stopped (here by a resume of
   * an operation enqueued before) must be stopped as the client was: nothing is sent through a
   * client that was shut down, shut down now or closed, as nothing is through the app's client
   * after {@code shutdown()}, and the client still terminates.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(Stop.class)
  @EnabledForJreRange(min = JRE.JAVA_21)
  void aTwinBuiltAfterTheClientStoppedIsStoppedToo(Stop stop) throws Exception {
    IdempotentServer server = serverExtension.server();
    HttpClient own = following();
    Fixture f = new Fixture();
    IdempotentHttpClient client = IdempotentHttpClient.builder(own).idempotentExecutor(f.executor).build();
    OperationId id = client.operation("create-order").enqueue(Fixture.post(server.url("/orders"), "{}"));

    stop.action.accept(client);
    try {
      f.executor.resume(id, client.resumeTransport());
    } catch (Exception expected) {
      // refused: what the resume then makes of it is the executor's (see ResumeTransport)
    }

    assertEquals(0, server.recordedRequests().size(), "a request went out after " + stop + "()");
    if (stop != Stop.CLOSE) { // close() leaves the app's client running
      assertTrue(client.awaitTermination(Duration.ofSeconds(10)), "the twin built after " + stop + "() terminated");
    }
  }

  /** How the app stops the Idem client. */
  enum Stop {
    SHUTDOWN(IdempotentHttpClient::shutdown),
    SHUTDOWN_NOW(IdempotentHttpClient::shutdownNow),
    CLOSE(IdempotentHttpClient::close);

    final Consumer<IdempotentHttpClient> action;

    Stop(Consumer<IdempotentHttpClient> action) {
      this.action = action;
    }
  }

  /** Whether the app's client makes keyed attempts go through a twin. */
  enum Twin {
    WITH {
      @Override
      HttpClient client() {
        return following();
      }
    },
    WITHOUT {
      @Override
      HttpClient client() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
            .build();
      }
    };

    abstract HttpClient client();
  }

  /** The app's client's own awaitTermination (Java 21+; this compiles for 17). */
  private static boolean awaitTermination(HttpClient c, Duration d) throws InterruptedException {
    return Boolean.TRUE.equals(Lifecycle.call(c, "awaitTermination", Lifecycle.durationParam(), d));
  }

  /** Runs a blocking call on a thread of its own, as an app's request thread would. */
  private static <T> CompletableFuture<T> onItsOwnThread(Callable<T> blocking) {
    CompletableFuture<T> out = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        out.complete(blocking.call());
      } catch (Throwable e) {
        out.completeExceptionally(e);
      }
    }, "keyed-send");
    t.setDaemon(true);
    t.start();
    return out;
  }

  /** The record once it has {@code attempts} attempts (the executor records an aborted one as it ends). */
  private static OperationRecord awaitAttempts(Fixture f, OperationId id, int attempts) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    OperationRecord r = f.record(id);
    while (r.attempts().size() < attempts && System.nanoTime() < end) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
      r = f.record(id);
    }
    return r;
  }

  /** An app's client that follows redirects: keyed attempts go through the twin. */
  private static HttpClient following() {
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).followRedirects(HttpClient.Redirect.NORMAL)
        .connectTimeout(Duration.ofSeconds(5)).build();
  }
}
