package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Regression test for a defect found by review, described as it was; fixed: SyncDriver handles a checked exception a transport throws undeclared, and the executor completes the single flight for any Throwable.
 *
 * <p>A blocking call through the OkHttp interceptor whose thread is interrupted (the app stops a
 * worker: {@code Future.cancel(true)}, an executor's {@code shutdownNow}) while OkHttp connects.
 * OkHttp 5 waits for its connect attempts in {@code FastFallbackExchangeFinder.awaitTcpConnect}
 * ({@code LinkedBlockingDeque.poll}) and lets the checked {@code InterruptedException} out of
 * {@code Call.execute()} undeclared (Kotlin). Here the interrupt lands while the journal writes the
 * first claim, so it is already set when the first attempt connects: deterministic, and the same
 * as one during a slow connect.
 *
 * <p>{@code ChainTransport.send} catches IOException and RuntimeException only, and
 * {@code SyncDriver.drive} and {@code IdempotentExecutor.lead} catch IdempotencyException,
 * RuntimeException and Error only: the InterruptedException passes all of them. So:
 * <ul>
 *   <li>the operation is left IN_FLIGHT under this executor's lease (no attempt recorded, the claim
 *       not given back), not PENDING as the docs promise for an interrupted call;</li>
 *   <li>the caller gets a raw InterruptedException instead of the OperationPendingException (an
 *       IOException) that every other interruption gives;</li>
 *   <li>the single flight's result is never completed ({@code lead} completes it only in its catch),
 *       so a concurrent call for the same operation in this process waits forever;</li>
 *   <li>the attempt timer ({@code attemptTimeout}) is never disarmed, so it interrupts the caller's
 *       thread later, while it runs unrelated code.</li>
 * </ul>
 */
class InterruptWhileConnectingTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  final AtomicReference<Runnable> onClaim = new AtomicReference<>();
  final AtomicReference<Runnable> onBegin = new AtomicReference<>();

  final ForwardingJournal journal = new ForwardingJournal(f.journal) {
    @Override
    public BeginResult begin(NewOperation operation) throws IdempotencyException {
      BeginResult begun = super.begin(operation);
      Runnable hook = onBegin.get();
      if (hook != null) {
        hook.run();
      }
      return begun;
    }

    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      Optional<Lease> lease = super.claim(id, owner, now, leaseFor);
      Runnable hook = onClaim.getAndSet(null);
      if (hook != null) {
        hook.run();
      }
      return lease;
    }
  };

  @Test
  void anInterruptedCallLeavesTheOperationPendingAndThrowsAnIoException() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().journal(journal).build()).build();
    OkHttpClient client = Fixture.client(idem);
    IdempotentOperation op = IdempotentOperation.of("create-order");

    onClaim.set(() -> Thread.currentThread().interrupt()); // the app interrupts the caller here
    Throwable thrown = assertThrows(Throwable.class, () -> client.newCall(order(server.url("/orders"), op)).execute());
    Thread.interrupted();

    assertEquals(0, server.recordedRequests().size(), "nothing reached the server");
    assertEquals(OperationState.PENDING, f.record(op).state(), "an interrupted call must leave the operation PENDING"
        + " with its key, not held IN_FLIGHT under a live lease; the caller got " + thrown);
    assertInstanceOf(IOException.class, thrown, "Call.execute() declares IOException only");
  }

  @Test
  void aConcurrentCallForTheSameOperationIsAnswered() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().journal(journal).build()).build();
    OkHttpClient client = Fixture.client(idem);
    IdempotentOperation op = IdempotentOperation.of("create-order");

    CompletableFuture<Response> second = new CompletableFuture<>();
    CountDownLatch secondJoined = new CountDownLatch(1);
    Thread follower = new Thread(() -> {
      try {
        second.complete(client.newCall(order(server.url("/orders"), op)).execute());
      } catch (Throwable e) {
        second.completeExceptionally(e);
      }
    }, "second-call");
    onClaim.set(() -> {
      // The first call holds the operation's flight: a second call for it joins and waits.
      onBegin.set(() -> {
        if (Thread.currentThread() == follower) {
          secondJoined.countDown();
        }
      });
      follower.start();
      try {
        assertTrue(secondJoined.await(10, TimeUnit.SECONDS));
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
      Thread.currentThread().interrupt(); // then the app interrupts the first caller
    });
    assertThrows(Throwable.class, () -> client.newCall(order(server.url("/orders"), op)).execute());
    Thread.interrupted();

    try {
      second.get(10, TimeUnit.SECONDS).close();
    } catch (ExecutionException answered) {
      // told PENDING, say: answered either way
    } catch (TimeoutException e) {
      follower.interrupt();
      throw new AssertionError("the second call for " + op + " still waits for the first, which ended 10 s ago;"
          + " journal: " + f.record(op).state(), e);
    }
  }

  @Test
  void theAttemptTimerDoesNotInterruptTheCallerAfterTheCallEnded() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentExecutor executor = f.executorBuilder().journal(journal)
        .retryPolicy(RetryPolicy.builder().attemptTimeout(Duration.ofSeconds(5)).build()).build();
    OkHttpClient client = Fixture.client(IdemOkHttp.builder(executor).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");

    onClaim.set(() -> Thread.currentThread().interrupt());
    assertThrows(Throwable.class, () -> client.newCall(order(server.url("/orders"), op)).execute());
    Thread.interrupted(); // the app handles the interrupt it made (restored or consumed by the call)

    f.time.advance(Duration.ofSeconds(6)); // the caller's thread goes on with other work
    assertFalse(Thread.interrupted(), "the attempt timer of a call that ended interrupted its caller's thread"
        + " afterwards, in unrelated code");
  }

  /**
   * No app interrupt at all: the executor's own attempt timer interrupts the sending thread when an
   * attempt outlives {@code attemptTimeout} (docs/client.md, "A timeout per attempt"), and the
   * OkHttp adapter keeps the app's connect timeout. An attempt whose connect is slower than
   * {@code attemptTimeout} (a target that does not accept in time) gets that interrupt while OkHttp
   * waits for the connect: the InterruptedException escapes as above, so the timed-out attempt is
   * neither recorded nor retried with the same key as the docs promise; the call fails with a raw
   * InterruptedException and the operation stays IN_FLIGHT.
   */
  @Test
  void anAttemptTimeoutDuringASlowConnectIsRetriedWithTheSameKey() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdempotentExecutor executor = f.executorBuilder().journal(journal)
        .retryPolicy(RetryPolicy.builder().attemptTimeout(Duration.ofSeconds(2)).build()).build();
    CountDownLatch connecting = new CountDownLatch(1);
    CountDownLatch accept = new CountDownLatch(1);
    javax.net.SocketFactory slowConnect = new javax.net.SocketFactory() {
      @Override
      public java.net.Socket createSocket() {
        return new java.net.Socket() {
          @Override
          public void connect(java.net.SocketAddress endpoint, int timeout) throws IOException {
            connecting.countDown();
            try {
              accept.await(); // the target accepts only once the test says so
            } catch (InterruptedException e) {
              throw new java.io.InterruptedIOException();
            }
            super.connect(endpoint, timeout);
          }
        };
      }

      @Override
      public java.net.Socket createSocket(String host, int port) {
        throw new UnsupportedOperationException();
      }

      @Override
      public java.net.Socket createSocket(String host, int port, java.net.InetAddress local, int localPort) {
        throw new UnsupportedOperationException();
      }

      @Override
      public java.net.Socket createSocket(java.net.InetAddress host, int port) {
        throw new UnsupportedOperationException();
      }

      @Override
      public java.net.Socket createSocket(java.net.InetAddress address, int port, java.net.InetAddress local,
          int localPort) {
        throw new UnsupportedOperationException();
      }
    };
    OkHttpClient client = Fixture.client(IdemOkHttp.builder(executor).build()).newBuilder()
        .socketFactory(slowConnect).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");

    CompletableFuture<Response> call = new CompletableFuture<>();
    Thread caller = new Thread(() -> {
      try {
        call.complete(client.newCall(order(server.url("/orders"), op)).execute());
      } catch (Throwable e) {
        call.completeExceptionally(e);
      }
    }, "caller");
    caller.start();
    assertTrue(connecting.await(10, TimeUnit.SECONDS), "the first attempt connects");
    f.time.advance(Duration.ofSeconds(2)); // the attempt timeout: the executor interrupts the sender
    accept.countDown(); // from now on the target accepts

    try (Response response = call.get(10, TimeUnit.SECONDS)) {
      assertEquals(201, response.code());
    } catch (ExecutionException e) {
      throw new AssertionError("the timed-out attempt was to be retried with the same key; the call failed with "
          + e.getCause() + " and the journal holds " + f.record(op).state() + " " + f.record(op).attempts(), e);
    }
    assertEquals(OperationState.SUCCEEDED, f.record(op).state());
    assertEquals(1, server.recordedRequests().size());
  }
}
