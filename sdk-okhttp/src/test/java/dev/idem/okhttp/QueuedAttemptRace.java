package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.testing.VirtualTime;
import dev.idem.testkit.IdempotentServer;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The race of a keyed attempt that waits in OkHttp's dispatcher queue and is cancelled (by its
 * attempt timeout, or by the app) just as the dispatcher promotes it. Deterministic, with no
 * sleeps:
 *
 * <ul>
 *   <li>the dispatcher has one slot per host, and another call of the app (a request to
 *       {@code /slow}, held by an interceptor until released) takes it, so the attempt queues;
 *   <li>time is virtual: the attempt timeout fires only when the test advances the clock;
 *   <li>the window: the executor's injected asyncExecutor is handed the attempt's record from
 *       inside the timeout's cancel (its second task once {@link #arm armed}); there it frees the
 *       slot, so the dispatcher promotes the cancelled attempt, and holds the cancel until the
 *       server has the keyed request or the promoted call has ended without sending it
 *       ({@link #holdWindowOpen}). An app's cancel holds the same window from its own callback.
 * </ul>
 *
 * <p>Whoever wins, the rule the race tests pin: "not sent" (which can end the operation FAILED)
 * only when the request certainly did not go out. {@link #timeOutAsItIsPromoted} asserts it.
 *
 * <p>One instance per test (create it once the test's server runs, close it after); not
 * thread-safe to configure. Every wait is bounded, so a lost race fails instead of hanging.
 */
final class QueuedAttemptRace implements AutoCloseable {
  /** The attempt timeout of {@link #ONE_TIMED_ATTEMPT}. */
  static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(2);
  /** One attempt, timed out after {@link #ATTEMPT_TIMEOUT}: its verdict is the operation's. */
  static final RetryPolicy ONE_TIMED_ATTEMPT = RetryPolicy.builder().maxAttempts(1)
      .attemptTimeout(ATTEMPT_TIMEOUT).deadline(Duration.ofHours(1)).build();
  private static final String SLOT_HOLDER = "/slow";
  private static final long WAIT_SECONDS = 10;

  private final Fixture fixture = new Fixture();
  final VirtualTime time = fixture.time;
  final InMemoryJournal journal = fixture.journal;
  private final IdempotentServer server;
  private final Dispatcher dispatcher;
  private final ExecutorService pool = Executors.newSingleThreadExecutor();
  private final CountDownLatch slotTaken = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);
  private final CountDownLatch attemptEnded = new CountDownLatch(1);
  // An attempt with Expect: 100-continue waits for the server's 100 before its body, and the test
  // server records a request only once it has the body (it sends no 100 of its own): the window
  // closes once the attempt's head is out instead.
  private final CountDownLatch expectHeadOut = new CountDownLatch(1);
  private final AtomicInteger armed = new AtomicInteger(-1);
  private volatile IdempotentOperation racing;
  private Result slotHolder;

  /** A race on OkHttp's default dispatcher executor. */
  QueuedAttemptRace(IdempotentServer server) {
    this(server, new Dispatcher());
  }

  /** A race whose dispatcher runs its calls on {@code dispatcherExecutor}. */
  QueuedAttemptRace(IdempotentServer server, ExecutorService dispatcherExecutor) {
    this(server, new Dispatcher(dispatcherExecutor));
  }

  private QueuedAttemptRace(IdempotentServer server, Dispatcher dispatcher) {
    this.server = Objects.requireNonNull(server, "server");
    this.dispatcher = dispatcher;
    dispatcher.setMaxRequestsPerHost(1);
  }

  /** An executor on this race's journal and virtual time, with the default asyncExecutor. */
  IdempotentExecutor.Builder executorBuilder() {
    return fixture.executorBuilder();
  }

  /**
   * An executor on this race's journal and virtual time whose asyncExecutor is the race's hook: a
   * single thread, which holds the window open once {@link #arm armed}.
   */
  IdempotentExecutor executor(RetryPolicy policy) {
    return executorBuilder().asyncExecutor(this::hand).retryPolicy(policy).build();
  }

  /** A client with {@code idem} installed, on the race's one-slot dispatcher. */
  OkHttpClient client(IdemOkHttp idem) {
    return idem.install(new OkHttpClient.Builder().dispatcher(dispatcher))
        .eventListener(new EventListener() {
          @Override
          public void callFailed(Call call, IOException ioe) {
            ended(call);
          }

          @Override
          public void callEnd(Call call) {
            ended(call);
          }

          @Override
          public void requestHeadersEnd(Call call, Request request) {
            if (!isSlotHolder(request) && request.header("Expect") != null) {
              expectHeadOut.countDown();
            }
          }

          private void ended(Call call) {
            if (!isSlotHolder(call.request())) {
              attemptEnded.countDown();
            }
          }
        })
        .addInterceptor(chain -> {
          if (isSlotHolder(chain.request())) {
            slotTaken.countDown();
            try {
              release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
          return chain.proceed(chain.request());
        }).build();
  }

  /** Another call of the app takes the host's only slot (a slow download, say) until released. */
  void holdSlot(OkHttpClient client) throws InterruptedException {
    slotHolder = new Result();
    client.newCall(new Request.Builder().url(server.url(SLOT_HOLDER).toString()).build()).enqueue(slotHolder);
    assertTrue(slotTaken.await(WAIT_SECONDS, TimeUnit.SECONDS), "the slot holder never started");
  }

  /** Frees the slot and waits for the slot holder's answer. */
  void freeSlot() throws Exception {
    release.countDown();
    slotHolder.body.get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  /**
   * The race's hook is armed: the second task the executor is handed from now on (the attempt's
   * record, from inside its cancel) holds the window open for {@code op}.
   */
  void arm(IdempotentOperation op) {
    racing = op;
    armed.set(0);
  }

  /**
   * The window, from inside the cancel: frees the slot, so the dispatcher promotes the queued
   * attempt, and waits until the server has {@code op}'s keyed request, the promoted call has
   * ended, or (with Expect: 100-continue) the attempt's head is out.
   */
  void holdWindowOpen(IdempotentOperation op) {
    release.countDown();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (keyed(op) == 0 && attemptEnded.getCount() > 0 && expectHeadOut.getCount() > 0
        && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
  }

  private void hand(Runnable command) {
    if (armed.get() >= 0 && armed.getAndIncrement() == 1) {
      holdWindowOpen(racing);
    }
    pool.execute(command);
  }

  /**
   * The whole timeout race for {@code request} (tagged with its operation), sent through the
   * callFactory of an adapter on {@link #executor executor(ONE_TIMED_ATTEMPT)}: the slot is held,
   * the attempt queues, the attempt timeout fires and the window is held open as the attempt is
   * promoted. Asserts the rule that holds whoever wins, and returns the journal's record.
   */
  OperationRecord timeOutAsItIsPromoted(Request request) throws Exception {
    IdempotentOperation op = Objects.requireNonNull(request.tag(IdempotentOperation.class), "untagged request");
    IdemOkHttp idem = IdemOkHttp.builder(executor(ONE_TIMED_ATTEMPT)).build();
    OkHttpClient client = client(idem);
    holdSlot(client);

    Result attempt = new Result();
    idem.callFactory(client).newCall(request).enqueue(attempt);

    arm(op);
    time.advance(ATTEMPT_TIMEOUT); // the attempt timeout, while the attempt waits in the queue
    attempt.awaitSettled();
    slotHolder.body.get(WAIT_SECONDS, TimeUnit.SECONDS);
    assertAttemptCallEnded();

    OperationRecord r = journal.find(op.id()).orElseThrow();
    if (keyed(op) > 0) {
      assertTrue(r.state() != OperationState.FAILED, "the server received the keyed request, yet the journal"
          + " ended the operation FAILED as never sent: " + r);
      assertTrue(r.attempts().stream().anyMatch(x -> x.classification() == Classification.AMBIGUOUS),
          "the server received the keyed request, yet no attempt counts as possibly sent: " + r);
    }
    return r;
  }

  /** Asserts that the promoted attempt's OkHttp call ended (sent or not). */
  void assertAttemptCallEnded() throws InterruptedException {
    assertTrue(attemptEnded.await(WAIT_SECONDS, TimeUnit.SECONDS), "the promoted attempt's call ended");
  }

  /** {@code op}'s record once an attempt is in it (recorded on the executor's pool when it ends). */
  OperationRecord recordOnceAttempted(IdempotentOperation op) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    OperationRecord r = journal.find(op.id()).orElseThrow();
    while (r.attempts().isEmpty() && System.nanoTime() < deadline) {
      Thread.onSpinWait();
      r = journal.find(op.id()).orElseThrow();
    }
    return r;
  }

  /** How many requests carrying {@code op}'s key the server received. */
  long keyed(IdempotentOperation op) {
    return server.recordedRequests().stream().filter(r -> r.keyHeader().equals(Optional.of(op.key().value()))).count();
  }

  private static boolean isSlotHolder(Request request) {
    return request.url().encodedPath().equals(SLOT_HOLDER);
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }

  /** Completes with "status body" or the failure. */
  static final class Result implements Callback {
    final CompletableFuture<String> body = new CompletableFuture<>();

    @Override
    public void onFailure(Call call, IOException e) {
      body.completeExceptionally(e);
    }

    @Override
    public void onResponse(Call call, Response response) throws IOException {
      try (response) {
        body.complete(response.code() + " " + response.body().string());
      }
    }

    /** Waits until the app's callback is told, whatever it is told. */
    void awaitSettled() throws Exception {
      try {
        body.get(WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (ExecutionException ignored) {
        // a failure is an answer too: the tests judge the journal, not the callback
      }
    }
  }
}
