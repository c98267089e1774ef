package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.FakeHost;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Requests;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Journal work of an asynchronous execution never runs on the thread that completes the attempt
 * when that thread is the HTTP client's (issue 14): the completion returns at once, even while the
 * journal is stuck, and the work runs on the executor's own asyncExecutor.
 */
class AsyncJournalThreadTest {
  private final VirtualTime time = new VirtualTime();
  private final CountDownLatch journalMayGoOn = new CountDownLatch(1);
  private final CountDownLatch journalEntered = new CountDownLatch(1);
  private final List<String> recordingThreads = new CopyOnWriteArrayList<>();
  private final ExecutorService clientThread = Executors.newSingleThreadExecutor(r -> new Thread(r, "http-client"));
  private final ExecutorService idemThreads = Executors.newSingleThreadExecutor(r -> new Thread(r, "idem-test-async"));

  /** A journal whose attempt records wait on a latch, remembering which thread wrote them. */
  private final ForwardingJournal blocking = new ForwardingJournal(new InMemoryJournal()) {
    @Override
    public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
      recordingThreads.add(Thread.currentThread().getName());
      journalEntered.countDown();
      try {
        journalMayGoOn.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      super.recordAttempt(id, lease, attempt);
    }
  };

  @AfterEach
  void stop() {
    journalMayGoOn.countDown();
    clientThread.shutdownNow();
    idemThreads.shutdownNow();
  }

  @Test
  void theClientsCompletionThreadIsReleasedWhileTheJournalIsStuck() throws Exception {
    CompletableFuture<ResponseSnapshot> onTheWire = new CompletableFuture<>();
    AsyncTransport transport = (request, key) -> onTheWire;
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(blocking).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(idemThreads).build();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();

    CompletableFuture<Outcome> result = idem.executeAsync(op, transport);
    // The client's thread delivers the response, as OkHttp's callback or java.net.http's executor would.
    CompletableFuture<Void> delivered = CompletableFuture.runAsync(
        () -> onTheWire.complete(FakeHost.response(201, java.util.Map.of())), clientThread);

    assertTrue(journalEntered.await(10, TimeUnit.SECONDS), "the journal was called");
    delivered.get(10, TimeUnit.SECONDS); // returns although the journal is still stuck
    assertFalse(result.isDone(), "the journal has not finished yet");
    assertEquals(List.of("idem-test-async"), recordingThreads, "recorded on the executor's own thread");

    journalMayGoOn.countDown();
    assertEquals(201, result.get(10, TimeUnit.SECONDS).response().status());
  }

  @Test
  void byDefaultTheWorkRunsOnIdemsOwnPool() throws Exception {
    journalMayGoOn.countDown();
    CompletableFuture<ResponseSnapshot> onTheWire = new CompletableFuture<>();
    // The executor's own pool (issue 24: one per executor, closed with it, no longer JVM-global).
    try (IdempotentExecutor idem = IdempotentExecutor.builder().journal(blocking).clock(time.clock())
        .scheduler(time.scheduler()).build()) {
      CompletableFuture<Outcome> result = idem.executeAsync(
          Operation.builder("create-order", Requests.order("{\"n\":1}")).build(), (request, key) -> onTheWire);
      clientThread.submit(() -> onTheWire.complete(FakeHost.response(201, java.util.Map.of())));
      result.get(10, TimeUnit.SECONDS);
      assertEquals(1, recordingThreads.size());
      assertTrue(recordingThreads.get(0).startsWith("idem-async-"), recordingThreads.toString());
    }
  }
}
