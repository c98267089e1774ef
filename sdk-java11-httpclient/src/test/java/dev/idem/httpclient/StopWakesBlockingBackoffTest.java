package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.Sleeper;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpClient;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A blocking keyed {@code send} got a 503 with {@code Retry-After: 60} and waits out that backoff
 * when the app stops the Idem client ({@code shutdown()}, {@code shutdownNow()}, or {@code close()}
 * of a client whose keyed attempts go through its twin). The stop marks the call to end PENDING
 * "where it would send its next attempt", but nothing woke the thread: the caller, and
 * {@code awaitTermination}, waited out the whole backoff (the Retry-After up to the policy's
 * {@code maxDelay}: 10 s by default, 60 s under one that allows it) for a call that was never
 * going to send anything more (an asynchronous call in the same place ends at once). The stop must end that
 * wait: no further attempt, the operation PENDING with its one attempt and its key (a resume sends
 * that key), the caller told promptly with an {@link OperationPendingException}, no interrupt left
 * on its thread, and the thread's later calls backing off again.
 *
 * <p>The backoff here is a sleeper that blocks until the thread is interrupted (the only way to
 * cut a sleep short) or the test releases it; nothing sleeps for real, and the waits for the call
 * are bounded. The wake runs on every Java version ({@code shutdown()} and {@code shutdownNow()}
 * stop the keyed calls on Java 17 too); what {@code awaitTermination} and {@code isTerminated}
 * then say is checked on Java 21+ only (where HttpClient has them); run that with
 * {@code JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 mvn -B -q -o -pl sdk-java11-httpclient -am
 * test -Dtest=StopWakesBlockingBackoffTest -Dsurefire.failIfNoSpecifiedTests=false}.
 *
 * <p>Found by a review on 2026-12-05.
 */
class StopWakesBlockingBackoffTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  /** The app's request thread: every blocking call of a test runs on this one thread. */
  private final ExecutorService appThread = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "app-request-thread");
    t.setDaemon(true);
    return t;
  });
  /** Ends a backoff that nothing woke, so that a failing test leaves no thread behind. */
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void tearDown() {
    release.countDown();
    appThread.shutdownNow();
  }

  /** How the app stops the Idem client, and over which client of its own. */
  enum Stop {
    SHUTDOWN(IdempotentHttpClient::shutdown, StopWakesBlockingBackoffTest::plain),
    SHUTDOWN_NOW(IdempotentHttpClient::shutdownNow, StopWakesBlockingBackoffTest::plain),
    /** With the app's executor and a twin: close() stops the keyed calls before it closes the twin. */
    CLOSE_WITH_TWIN(IdempotentHttpClient::close, StopWakesBlockingBackoffTest::following);

    final Consumer<IdempotentHttpClient> action;
    final Supplier<HttpClient> own;

    Stop(Consumer<IdempotentHttpClient> action, Supplier<HttpClient> own) {
      this.action = action;
      this.own = own;
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Stop.class)
  void aStopWakesABlockingSendWaitingOutItsBackoffAndLeavesItPendingWithItsKey(Stop stop) throws Exception {
    Stopped s = stopDuringBackoff(stop);

    assertCallEndedPendingWithItsKey(s);

    // The same thread's next call, through a live client over the same executor, backs off again:
    // the stop's mark on the thread ended with the call it stopped.
    IdempotentServer server = serverExtension.server();
    server.plan().next(Fault.status(503));
    IdempotentHttpClient live = IdempotentHttpClient.builder(plain()).idempotentExecutor(s.f.executor).build();
    OperationCall next = live.operation("create-order");
    int waitsBefore = s.f.time.sleeperWaits().size();
    IdempotentHttpResponse<String> r = appThread.submit(() -> next.send(
        Fixture.post(server.url("/orders"), "{\"sku\":\"B-2\"}"), BodyHandlers.ofString())).get(10, TimeUnit.SECONDS);
    assertEquals(201, r.statusCode());
    assertEquals(waitsBefore + 1, s.f.time.sleeperWaits().size(), "the thread's next call waited out its backoff");
  }

  /**
   * Java 21+: once the stopped call has returned, a client that was shut down says so, and
   * {@code awaitTermination} does not wait out the 60 s backoff for it.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(value = Stop.class, names = {"SHUTDOWN", "SHUTDOWN_NOW"})
  @EnabledForJreRange(min = JRE.JAVA_21)
  void awaitTerminationDoesNotWaitOutTheBackoffOfAStoppedBlockingSend(Stop stop) throws Exception {
    Stopped s = stopDuringBackoff(stop);

    assertTrue(s.client.awaitTermination(Duration.ofSeconds(5)),
        "awaitTermination after " + stop + "() waited for a blocking send still waiting out its Retry-After: 60");
    assertTrue(s.client.isTerminated());
    assertCallEndedPendingWithItsKey(s);
  }

  /** What a test needs once the stop came: the world, the stopped client, and the call's end. */
  private record Stopped(Fixture f, IdempotentHttpClient client, OperationId id, CompletableFuture<Throwable> told,
      AtomicBoolean interruptLeft) {
  }

  /**
   * Sends a keyed call on the app's thread, which gets a 503 with {@code Retry-After: 60} and
   * blocks in its backoff; then {@code stop} comes from the test's thread.
   */
  private Stopped stopDuringBackoff(Stop stop) throws Exception {
    IdempotentServer server = serverExtension.server();
    server.plan().next(Fault.status(503).withHeader("Retry-After", "60"));
    CountDownLatch backingOff = new CountDownLatch(1);
    AtomicBoolean first = new AtomicBoolean(true);
    // The first backoff blocks until an interrupt ends it, as Thread.sleep would for 60 s; later
    // ones only move the virtual clock.
    Sleeper blocking = d -> {
      if (first.getAndSet(false)) {
        backingOff.countDown();
        if (!release.await(30, TimeUnit.SECONDS)) {
          throw new AssertionError("the backoff was never woken");
        }
      }
    };
    Fixture f = new Fixture(b -> { }, c -> { }, blocking, null);
    IdempotentHttpClient client = IdempotentHttpClient.builder(stop.own.get()).idempotentExecutor(f.executor).build();
    OperationCall call = client.operation("create-order");
    AtomicBoolean interruptLeft = new AtomicBoolean();
    CompletableFuture<Throwable> told = CompletableFuture.supplyAsync(() -> {
      try {
        call.send(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), BodyHandlers.ofString());
        return null;
      } catch (Throwable e) {
        return e;
      } finally {
        interruptLeft.set(Thread.interrupted());
      }
    }, appThread);
    assertTrue(backingOff.await(5, TimeUnit.SECONDS), "the 503 arrived and the backoff began");
    assertEquals(OperationState.PENDING, f.record(call.operationId()).state(), "waiting out its backoff");

    stop.action.accept(client);

    try {
      told.get(5, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      fail(stop + "() did not wake a blocking send waiting out its Retry-After: 60 backoff; the caller waits for it");
    } catch (ExecutionException e) {
      throw new AssertionError(e.getCause());
    }
    return new Stopped(f, client, call.operationId(), told, interruptLeft);
  }

  private void assertCallEndedPendingWithItsKey(Stopped s) throws Exception {
    IdempotentServer server = serverExtension.server();
    Throwable told = s.told.get();
    assertInstanceOf(OperationPendingException.class, told, "the caller is told the operation is PENDING");
    assertEquals(s.id, ((OperationPendingException) told).operationId());
    assertFalse(s.interruptLeft.get(), "the stop's wake left an interrupt on the app's thread");
    OperationRecord record = s.f.record(s.id);
    assertEquals(OperationState.PENDING, record.state(), "attempts: " + record.attempts());
    assertEquals(1, record.attempts().size(), "no attempt after the stop; attempts: " + record.attempts());
    Fixture.assertKeyOnEveryRequest(server, s.id.key(), 1);

    // The key survives: a resume through a live client sends the operation again with it.
    Outcome resumed = s.f.executor.resume(s.id, s.f.client.resumeTransport());
    assertEquals(201, resumed.response().status());
    assertEquals(OperationState.SUCCEEDED, s.f.record(s.id).state());
    Fixture.assertKeyOnEveryRequest(server, s.id.key(), 2);
    assertEquals(1, server.effectCount(s.id.key().value()));
  }

  private static HttpClient plain() {
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  }

  /** An app's client that follows redirects: keyed attempts go through the twin. */
  private static HttpClient following() {
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).followRedirects(HttpClient.Redirect.NORMAL)
        .connectTimeout(Duration.ofSeconds(5)).build();
  }
}
