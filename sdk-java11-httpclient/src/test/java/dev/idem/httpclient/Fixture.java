package dev.idem.httpclient;

import dev.idem.core.OperationException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.Classifier;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Jitter;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.Scheduler;
import dev.idem.core.spi.Sleeper;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import dev.idem.core.testing.VirtualTime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One test's world: virtual time, an in-memory journal, an executor on both, and the decorator
 * around a real JDK client. Backoff never really sleeps: the sync path's sleeper advances the
 * virtual clock, and the async path's waits are released by {@link #await}, which runs the
 * scheduler's tasks from the test thread while attempts travel on the client's threads.
 */
final class Fixture {
  /** One JDK client for every test: its connection pool is harmless across ports. */
  static final HttpClient JDK = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1) // no h2c upgrade dance with MockWebServer
      .connectTimeout(Duration.ofSeconds(5))
      .build();

  static final RetryPolicy POLICY = RetryPolicy.builder()
      .maxAttempts(4)
      .baseDelay(Duration.ofMillis(100))
      .maxDelay(Duration.ofSeconds(10))
      .deadline(Duration.ofSeconds(60))
      .jitter(Jitter.FULL)
      .build();

  final VirtualTime time = new VirtualTime();
  final InMemoryJournal journal = new InMemoryJournal();
  final IdempotentExecutor executor;
  final IdempotentHttpClient client;

  Fixture() {
    this(b -> { }, c -> { });
  }

  Fixture(java.util.function.Consumer<IdempotentExecutor.Builder> executorConfig,
      java.util.function.Consumer<IdempotentHttpClient.Builder> clientConfig) {
    this(executorConfig, clientConfig, null, null);
  }

  /** With hooks run before each sync sleep and each async wait (to let a server move on). */
  Fixture(java.util.function.Consumer<IdempotentExecutor.Builder> executorConfig,
      java.util.function.Consumer<IdempotentHttpClient.Builder> clientConfig, Sleeper sleepHook,
      Sleeper waitHook) {
    this(JDK, executorConfig, clientConfig, sleepHook, waitHook);
  }

  /** Around {@code jdk} instead of the shared HTTP/1.1 client (TLS, HTTP/2). */
  Fixture(HttpClient jdk, java.util.function.Consumer<IdempotentExecutor.Builder> executorConfig) {
    this(jdk, executorConfig, c -> { }, null, null);
  }

  private Fixture(HttpClient jdk, java.util.function.Consumer<IdempotentExecutor.Builder> executorConfig,
      java.util.function.Consumer<IdempotentHttpClient.Builder> clientConfig, Sleeper sleepHook,
      Sleeper waitHook) {
    Sleeper sleeper = sleepHook == null ? time.sleeper() : d -> {
      sleepHook.sleep(d);
      time.sleeper().sleep(d);
    };
    Scheduler virtual = time.scheduler();
    Scheduler scheduler = waitHook == null ? virtual : (task, delay) -> virtual.schedule(() -> {
      try {
        waitHook.sleep(delay);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      task.run();
    }, delay);
    IdempotentExecutor.Builder eb = IdempotentExecutor.builder()
        .journal(journal)
        .clock(time.clock())
        .sleeper(sleeper)
        .scheduler(scheduler)
        .random(() -> 0.5)
        .retryPolicy(POLICY)
        .classifier(Classifier.defaults());
    executorConfig.accept(eb);
    executor = eb.build();
    IdempotentHttpClient.Builder cb = IdempotentHttpClient.builder(jdk).idempotentExecutor(executor);
    clientConfig.accept(cb);
    client = cb.build();
  }

  /** With {@code hook} run before each sync sleep or each async wait, as {@code mode} uses. */
  static Fixture withHook(Mode mode, Sleeper hook) {
    return new Fixture(b -> { }, c -> { }, mode == Mode.SYNC ? hook : null, mode == Mode.ASYNC ? hook : null);
  }

  /**
   * A hook for waits of {@code atLeast} or longer: first let the server finish the effect under
   * {@code key}, in real time. Where the client gives up before the server is done (a timeout, a
   * 409), a retry sent too early would find the key still in flight.
   */
  static Sleeper untilSettled(IdempotentServer server, IdempotencyKey key, Duration atLeast) {
    return d -> {
      if (d.compareTo(atLeast) >= 0) {
        assertTrue(server.awaitEffects(key.value(), 1, Duration.ofSeconds(5)), "the server never settled " + key);
      }
    };
  }

  /** The raw key header of every request the server received, in order; empty where absent. */
  static List<Optional<String>> keysSent(IdempotentServer server) {
    return server.recordedRequests().stream().map(ReceivedRequest::keyHeader).toList();
  }

  /** Asserts the server received {@code requests} requests, each with {@code key}, bare. */
  static void assertKeyOnEveryRequest(IdempotentServer server, IdempotencyKey key, int requests) {
    List<ReceivedRequest> got = server.recordedRequests();
    assertEquals(requests, got.size(), "requests on the wire");
    got.forEach(r -> assertEquals(Optional.of(key.value()), r.keyHeader(),
        "every attempt carries the operation's key (request " + r.sequence() + ")"));
  }

  /** The reference server's default reply body for effect {@code n} under {@code key}. */
  static String createdBody(int n, IdempotencyKey key) {
    return "{\"id\":\"ord_" + n + "\",\"effect\":" + n + ",\"key\":\"" + key.value() + "\"}";
  }

  static HttpRequest post(URI uri, String json) {
    return HttpRequest.newBuilder(uri)
        .header("Content-Type", "application/json")
        .header("Authorization", "Bearer s3cr3t")
        .timeout(Duration.ofSeconds(5))
        .POST(HttpRequest.BodyPublishers.ofString(json))
        .build();
  }

  OperationRecord record(OperationId id) throws Exception {
    return executor.find(id).orElseThrow(() -> new AssertionError("not journaled: " + id));
  }

  /**
   * The OperationException {@code call} fails {@code request} with, sent as {@code mode} says:
   * {@code send}, or {@code sendAsync} {@linkplain #await awaited}. Fails the test if the call
   * succeeds or fails otherwise.
   */
  OperationException failure(Mode mode, OperationCall call, HttpRequest request) {
    if (mode == Mode.SYNC) {
      return org.junit.jupiter.api.Assertions.assertThrows(OperationException.class,
          () -> call.send(request, java.net.http.HttpResponse.BodyHandlers.ofString()));
    }
    Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
        () -> await(call.sendAsync(request, java.net.http.HttpResponse.BodyHandlers.ofString())));
    if (e instanceof ExecutionException ee && ee.getCause() instanceof Exception c) {
      e = c;
    }
    org.junit.jupiter.api.Assertions.assertTrue(e instanceof OperationException, e.toString());
    return (OperationException) e;
  }

  /**
   * Waits for an async call, running virtual-time tasks as they come due; fails after 15 real
   * seconds rather than hang. Rethrows the future's failure unwrapped.
   */
  <T> T await(CompletableFuture<T> future) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (!future.isDone()) {
      if (System.nanoTime() > deadline) {
        future.cancel(false);
        fail("async call did not finish within 15 s; pending virtual tasks: " + time.pendingTasks());
      }
      if (!time.runNextTask()) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // an attempt is on the wire
      }
    }
    try {
      return future.get(1, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof Exception ex) {
        throw ex;
      }
      throw e;
    }
  }
}
