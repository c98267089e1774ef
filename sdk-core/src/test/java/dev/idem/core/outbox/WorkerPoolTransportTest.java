package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.Operation;
import dev.idem.core.internal.PastAgeLimitException;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.junit.jupiter.api.Test;

class WorkerPoolTransportTest {
  private final Operation op = Operation.builder("create-order", Requests.order("{}")).build();
  private final List<Runnable> queued = new ArrayList<>();
  private final Executor manual = queued::add;
  private final VirtualTime time = new VirtualTime();
  private static final Duration MAX_WAIT = Duration.ofMinutes(1);

  @Test
  void theAttemptRunsOnTheWorkersNotOnTheCaller() throws Exception {
    ResponseSnapshot created = FakeHost.response(201, Map.of());
    List<IdempotencyKey> sent = new ArrayList<>();
    WorkerPoolTransport t = new WorkerPoolTransport((request, key) -> {
      sent.add(key);
      return created;
    }, manual, time.clock(), MAX_WAIT);

    CompletableFuture<ResponseSnapshot> f = t.sendAsync(op.request(), op.key());

    assertTrue(sent.isEmpty(), "nothing is sent until a worker runs it");
    assertEquals(1, queued.size());
    queued.get(0).run();
    assertSame(created, f.get());
    assertEquals(List.of(op.key()), sent);
  }

  @Test
  void anIoExceptionFromTheTransportFailsTheAttemptWithIt() {
    IOException reset = new IOException("connection reset");
    WorkerPoolTransport t = new WorkerPoolTransport((request, key) -> {
      throw reset;
    }, Runnable::run, time.clock(), MAX_WAIT);

    CompletableFuture<ResponseSnapshot> f = t.sendAsync(op.request(), op.key());

    ExecutionException e = assertThrows(ExecutionException.class, f::get);
    assertSame(reset, e.getCause());
  }

  @Test
  void anUndeclaredInterruptedExceptionFromTheTransportFailsTheAttemptAsInterrupted() throws Exception {
    // OkHttp 5's Call.execute throws InterruptedException, undeclared, when the worker is
    // interrupted while it connects; before, it escaped the worker and the attempt never ended.
    WorkerPoolTransport t = new WorkerPoolTransport((request, key) -> {
      throw WorkerPoolTransportTest.<RuntimeException>sneaky(new InterruptedException("connect interrupted"));
    }, Runnable::run, time.clock(), MAX_WAIT);

    CompletableFuture<ResponseSnapshot> f;
    try {
      f = t.sendAsync(op.request(), op.key());
    } finally {
      assertTrue(Thread.interrupted(), "the worker's interrupt is kept");
    }

    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(1, java.util.concurrent.TimeUnit.SECONDS));
    assertInstanceOf(InterruptedException.class,
        assertInstanceOf(java.io.InterruptedIOException.class, e.getCause()).getCause());
  }

  @SuppressWarnings("unchecked")
  private static <E extends Throwable> E sneaky(Throwable t) throws E {
    throw (E) t;
  }

  @Test
  void aPoolThatRefusesTheTaskMeansNothingWasSent() {
    WorkerPoolTransport t = new WorkerPoolTransport((request, key) -> {
      throw new AssertionError("never called");
    }, task -> {
      throw new RejectedExecutionException("shut down");
    }, time.clock(), MAX_WAIT);

    CompletableFuture<ResponseSnapshot> f = t.sendAsync(op.request(), op.key());

    ExecutionException e = assertThrows(ExecutionException.class, f::get);
    RequestNotSentException notSent = assertInstanceOf(RequestNotSentException.class, e.getCause());
    assertInstanceOf(RejectedExecutionException.class, notSent.getCause());
  }

  @Test
  void anAttemptThatWaitedJustUnderItsBoundIsSent() throws Exception {
    List<IdempotencyKey> sent = new ArrayList<>();
    WorkerPoolTransport t = new WorkerPoolTransport((request, key) -> {
      sent.add(key);
      return FakeHost.response(201, Map.of());
    }, manual, time.clock(), MAX_WAIT);

    CompletableFuture<ResponseSnapshot> f = t.sendAsync(op.request(), op.key());
    time.advance(MAX_WAIT.minusMillis(1));
    queued.get(0).run();

    assertEquals(201, f.get().status());
    assertEquals(List.of(op.key()), sent);
  }

  @Test
  void anAttemptThatWaitedItsBoundForAWorkerIsNotSent() {
    List<IdempotencyKey> sent = new ArrayList<>();
    WorkerPoolTransport t = new WorkerPoolTransport((request, key) -> {
      sent.add(key);
      return FakeHost.response(201, Map.of());
    }, manual, time.clock(), MAX_WAIT);

    CompletableFuture<ResponseSnapshot> f = t.sendAsync(op.request(), op.key());
    time.advance(MAX_WAIT);
    queued.get(0).run();

    ExecutionException e = assertThrows(ExecutionException.class, f::get);
    RequestNotSentException notSent = assertInstanceOf(RequestNotSentException.class, e.getCause());
    assertTrue(notSent.getMessage().contains("for a worker"), notSent.getMessage());
    assertEquals(List.of(), sent, "never sent");
  }

  @Test
  void anAttemptCancelledBeforeAWorkerTookItEndsNotSentAndIsNeverSent() {
    List<IdempotencyKey> sent = new ArrayList<>();
    WorkerPoolTransport t = new WorkerPoolTransport((request, key) -> {
      sent.add(key);
      return FakeHost.response(201, Map.of());
    }, manual, time.clock(), MAX_WAIT);

    CompletableFuture<ResponseSnapshot> f = t.sendAsync(op.request(), op.key());
    f.cancel(true);
    queued.get(0).run();

    ExecutionException e = assertThrows(ExecutionException.class, f::get);
    assertInstanceOf(RequestNotSentException.class, e.getCause());
    assertEquals(List.of(), sent, "never sent");
  }
  @Test
  void anAttemptAWorkerTakesAtItsOperationsAgeLimitIsNotSentEvenWithinItsWaitBound() {
    List<IdempotencyKey> sent = new ArrayList<>();
    WorkerPoolTransport t = new WorkerPoolTransport((request, key) -> {
      sent.add(key);
      return FakeHost.response(201, Map.of());
    }, manual, time.clock(), MAX_WAIT);
    Instant ageLimit = time.now().plusSeconds(10);

    CompletableFuture<ResponseSnapshot> f = t.sendAsync(op.request(), op.key(), ageLimit);
    time.advance(Duration.ofSeconds(10));
    queued.get(0).run();

    ExecutionException e = assertThrows(ExecutionException.class, f::get);
    PastAgeLimitException past = assertInstanceOf(PastAgeLimitException.class, e.getCause());
    assertTrue(past.getMessage().contains("age limit"), past.getMessage());
    assertEquals(List.of(), sent, "never sent");
  }

  @Test
  void anAttemptAWorkerTakesBeforeItsOperationsAgeLimitIsSent() throws Exception {
    List<IdempotencyKey> sent = new ArrayList<>();
    WorkerPoolTransport t = new WorkerPoolTransport((request, key) -> {
      sent.add(key);
      return FakeHost.response(201, Map.of());
    }, manual, time.clock(), MAX_WAIT);

    CompletableFuture<ResponseSnapshot> f = t.sendAsync(op.request(), op.key(), time.now().plusSeconds(10));
    time.advance(Duration.ofSeconds(10).minusMillis(1));
    queued.get(0).run();

    assertEquals(201, f.get().status());
    assertEquals(List.of(op.key()), sent);
  }
}
