package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.Sleeper;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import okhttp3.Call;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * IdemOkHttp's javadoc: "callTimeout and Call.cancel() end the call, whenever they come". A second
 * call of the same operation in the same process (a double submit, an app's own retry on another
 * thread) joins the first one's execution and waits for it; its cancel or call timeout does not end
 * that wait, so it waits out the first call's whole backoff (a server's Retry-After: 60) and
 * retries, however short its own call timeout.
 */
class CancelWhileJoinedReviewTest {
  private static final long BOUND_SECONDS = 10;

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  final ExecutorService threads = Executors.newFixedThreadPool(2);
  final CountDownLatch releaseLeader = new CountDownLatch(1);

  @AfterEach
  void tearDown() {
    releaseLeader.countDown();
    threads.shutdownNow();
  }

  @Test
  void cancelingACallThatJoinedAnotherOfTheSameOperationEndsIt() throws Exception {
    IdempotentServer server = serverExtension.server();
    CountDownLatch leaderBacksOff = new CountDownLatch(1);
    // The first call's backoff lasts until the test ends it (as a Retry-After: 60 would, for a minute).
    Sleeper sleeper = d -> {
      leaderBacksOff.countDown();
      releaseLeader.await();
      f.time.advance(d);
    };
    IdempotentExecutor executor = f.executorBuilder().sleeper(sleeper)
        .retryPolicy(RetryPolicy.builder().maxDelay(Duration.ofMinutes(2)).deadline(Duration.ofMinutes(10)).build())
        .build();
    OkHttpClient client = Fixture.client(IdemOkHttp.builder(executor).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(503).withHeader("Retry-After", "60"));

    Future<Integer> first = threads.submit(() -> {
      try (Response r = client.newCall(order(server.url("/orders"), op)).execute()) {
        return r.code();
      }
    });
    assertTrue(leaderBacksOff.await(BOUND_SECONDS, TimeUnit.SECONDS), "the first call never backed off");

    Call second = client.newCall(order(server.url("/orders"), op));
    AtomicReference<Thread> secondThread = new AtomicReference<>();
    Future<IOException> secondEnded = threads.submit(() -> {
      secondThread.set(Thread.currentThread());
      try (Response r = second.execute()) {
        throw new AssertionError("the second call returned " + r.code());
      } catch (IOException e) {
        return e;
      }
    });
    awaitJoined(secondThread);

    second.cancel();

    try {
      secondEnded.get(BOUND_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      fail("the canceled second call still waits for the first call's backoff and retries, "
          + BOUND_SECONDS + " s after its cancel");
    }
    releaseLeader.countDown();
    assertEquals(201, first.get(BOUND_SECONDS, TimeUnit.SECONDS));
    assertEquals(1, server.effectCount(op.key().value()));
  }

  /** Until the second call waits for the first one's execution. */
  private static void awaitJoined(AtomicReference<Thread> t) {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
    while (System.nanoTime() < until) {
      Thread th = t.get();
      if (th != null && Arrays.stream(th.getStackTrace()).anyMatch(e -> e.getMethodName().equals("awaitLeader"))
          && th.getState() == Thread.State.WAITING) {
        return;
      }
      LockSupport.parkNanos(1_000_000);
    }
    fail("the second call never joined the first one");
  }
}
