package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.Sleeper;
import dev.idem.core.testing.VirtualTime;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * OkHttp's call timeout, or {@code Call.cancel()}, while the interceptor's thread waits out a
 * backoff: a user with {@code callTimeout(2 s)} whose server answers 503 with
 * {@code Retry-After: 60} used to wait the whole 60 s, since OkHttp cancels the call's connections
 * but does not wake the thread that waits. The wait must end at once: the call throws as OkHttp
 * would, nothing more is sent, and the operation stays PENDING with its key.
 *
 * <p>The backoff here waits as {@code Thread.sleep} does, on virtual time: only an interrupt ends it
 * early (and then the virtual clock has not moved); if none comes within {@link #BOUND} of real
 * time, the whole wait passes on the virtual clock, as it would have in production.
 */
class CallEndsDuringBackoffTest {
  private static final Duration RETRY_AFTER = Duration.ofSeconds(60);
  /** The most a backoff waits, in real time, for the interrupt that cuts it short. */
  private static final Duration BOUND = Duration.ofSeconds(15);

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  final BackoffUntilWoken backoff = new BackoffUntilWoken(f.time);
  final ExecutorService caller = Executors.newSingleThreadExecutor();
  IdempotentServer server;
  OkHttpClient client;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
    // A Retry-After the policy honours in full: 60 s is within maxDelay and the deadline.
    IdempotentExecutor executor = f.executorBuilder().sleeper(backoff)
        .retryPolicy(RetryPolicy.builder().maxDelay(Duration.ofMinutes(2)).deadline(Duration.ofMinutes(10)).build())
        .build();
    client = Fixture.client(IdemOkHttp.builder(executor).build());
  }

  @AfterEach
  void tearDown() {
    caller.shutdownNow();
  }

  @Test
  void theCallTimeoutEndsALongRetryAfterAtOnceAndLeavesTheOperationPending() throws Exception {
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(503).withHeader("Retry-After", String.valueOf(RETRY_AFTER.toSeconds())));
    // OkHttp's call timeout runs on OkHttp's own watchdog, on the real clock: it cannot be injected.
    OkHttpClient timed = client.newBuilder().callTimeout(Duration.ofSeconds(2)).build();
    Instant start = f.time.now();

    Ended ended = run(timed.newCall(order(server.url("/orders"), op)));

    InterruptedIOException e = assertInstanceOf(InterruptedIOException.class, ended.failure(),
        "OkHttp's own call timeout exception");
    assertEquals("timeout", e.getMessage());
    assertBackoffCutShort(start);
    assertFalse(ended.interruptedAfter(), "the interrupt that woke the backoff was left on the app's thread");
    assertLeftPendingWithItsKey(op);
  }

  @Test
  void cancelingTheCallEndsALongRetryAfterAtOnceAndLeavesTheOperationPending() throws Exception {
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(503).withHeader("Retry-After", String.valueOf(RETRY_AFTER.toSeconds())));
    Call call = client.newCall(order(server.url("/orders"), op));
    Instant start = f.time.now();
    backoff.onEnter(call::cancel);  // from the waiting thread itself: no timing involved

    Ended ended = run(call);

    // The adapter's documented answer to a canceled call: an IOException, OperationPendingException.
    OperationPendingException e = assertInstanceOf(OperationPendingException.class, ended.failure());
    assertEquals(op.id(), e.operationId());
    assertBackoffCutShort(start);
    assertFalse(ended.interruptedAfter(), "the interrupt that woke the backoff was left on the app's thread");
    assertLeftPendingWithItsKey(op);

    // The app's own retry of the same operation sends the same key; one effect in all.
    backoff.onEnter(() -> { });
    try (Response r = client.newCall(order(server.url("/orders"), op)).execute()) {
      assertEquals(201, r.code());
    }
    Fixture.assertKeyOnEveryRequest(server, op.key().value(), 2);
    assertEquals(1, server.effectCount(op.key().value()));
  }

  @Test
  void cancelingTheCallFromAnotherThreadWakesTheBackoff() throws Exception {
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(503).withHeader("Retry-After", String.valueOf(RETRY_AFTER.toSeconds())));
    Call call = client.newCall(order(server.url("/orders"), op));
    Instant start = f.time.now();
    Future<Ended> running = caller.submit(() -> Ended.of(call));
    assertTrue(backoff.entered.await(BOUND.toSeconds(), TimeUnit.SECONDS), "the call never backed off");

    call.cancel();

    Ended ended = running.get(2 * BOUND.toSeconds(), TimeUnit.SECONDS);
    assertInstanceOf(OperationPendingException.class, ended.failure());
    assertBackoffCutShort(start);
    assertFalse(ended.interruptedAfter(), "the interrupt that woke the backoff was left on the app's thread");
    assertLeftPendingWithItsKey(op);
  }

  private Ended run(Call call) throws Exception {
    return caller.submit(() -> Ended.of(call)).get(2 * BOUND.toSeconds(), TimeUnit.SECONDS);
  }

  private void assertBackoffCutShort(Instant start) {
    assertEquals(List.of(RETRY_AFTER), backoff.requested, "the server's Retry-After was the backoff asked for");
    assertTrue(backoff.woken, "the backoff ran its course instead of ending with the call");
    assertEquals(start, f.time.now(), "time passed on the injected clock: the backoff was waited out");
  }

  private void assertLeftPendingWithItsKey(IdempotentOperation op) throws IOException {
    Fixture.assertKeyOnEveryRequest(server, op.key().value(), 1);
    assertEquals(OperationState.PENDING, f.record(op).state());
    assertEquals(op.key(), f.record(op).id().key());
    assertEquals(0, server.effectCount(op.key().value()));
  }

  /** How a call ended, seen from the thread that made it. */
  private record Ended(IOException failure, boolean interruptedAfter) {
    static Ended of(Call call) {
      try (Response r = call.execute()) {
        throw new AssertionError("the call returned " + r.code() + " instead of failing");
      } catch (IOException e) {
        return new Ended(e, Thread.currentThread().isInterrupted());
      }
    }

    @Override
    public IOException failure() {
      assertNotNull(failure);
      return failure;
    }
  }

  /**
   * A backoff that waits as {@code Thread.sleep} would: an interrupt ends it at once, with an
   * InterruptedException and without moving the virtual clock; if none comes within
   * {@link #BOUND} (real time), the whole wait passes on the virtual clock.
   */
  private static final class BackoffUntilWoken implements Sleeper {
    private final VirtualTime time;
    final List<Duration> requested = new CopyOnWriteArrayList<>();
    final CountDownLatch entered = new CountDownLatch(1);
    private volatile Runnable onEnter = () -> { };
    volatile boolean woken;

    BackoffUntilWoken(VirtualTime time) {
      this.time = time;
    }

    /** Runs {@code action} on the waiting thread as each backoff begins. */
    void onEnter(Runnable action) {
      this.onEnter = action;
    }

    @Override
    public void sleep(Duration d) throws InterruptedException {
      requested.add(d);
      entered.countDown();
      onEnter.run();
      try {
        if (new CountDownLatch(1).await(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
          throw new AssertionError("unreachable");
        }
      } catch (InterruptedException e) {
        woken = true;
        throw e;
      }
      time.advance(d);
    }
  }
}
