package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15: an Error outside a handler (here the JVM's own, which a listener throws while the
 * outcome is recorded; a listener's other Errors are logged and ignored) killed a worker thread of
 * the started processor, unseen by the app: nothing said processing had a problem. Now background processing stops, {@link WebhookProcessor#lastPollFailure()} returns
 * the Error, and {@link WebhookProcessor#processDue} fails fast, naming it. (A handler's own Error
 * is that event's failure, recorded and retried like any other.)
 */
class ProcessorErrorTest {
  static final class InjectedError extends VirtualMachineError {
    InjectedError() {
      super("injected");
    }
  }

  static final Instant T0 = ReceiverTest.T0;

  @TempDir
  Path dir;

  @Test
  void aListenersErrorOnAWorkerStopsProcessingAndIsReportedNotLost() throws Exception {
    InjectedError error = new InjectedError();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookReceiver receiver = acmeReceiver(inbox);
      WebhookProcessor p = WebhookProcessor.builder(inbox).handler("order.paid", e -> { })
          .listener(throwingOnProcessed(error)).pollInterval(Duration.ofMillis(20)).build();
      try {
        p.start();
        deliver(receiver, Instant.now(), "evt_1", "order.paid");
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (p.lastPollFailure().isEmpty() && System.nanoTime() < deadline) {
          Thread.onSpinWait();
        }
        assertEquals(Optional.of(error), p.lastPollFailure(), "the Error is reported, not lost with the thread");
        WebhookInboxException later = assertThrows(WebhookInboxException.class, () -> p.processDue(10));
        assertSame(error, later.getCause());
        assertTrue(later.getMessage().contains("InjectedError"), later.getMessage());
        assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state(), "the event itself was done");
      } finally {
        p.close();
      }
    }
  }

  /**
   * The CI failure of 2026-12-01: a poll already running when a worker broke finished after it and
   * cleared {@link WebhookProcessor#lastPollFailure()}, so the Error went unreported. Here the
   * interleaving is forced on the shared fake clock: the test holds {@link VirtualTime}'s monitor,
   * which its clock takes to read the time, so the second poll stops at its first clock read (the
   * claim) until the worker has broken.
   */
  @Test
  void aPollThatFinishesAfterTheWorkerBrokeDoesNotHideTheError() throws Exception {
    InjectedError error = new InjectedError();
    BlockingQueue<Runnable> polls = new LinkedBlockingQueue<>();
    Scheduler manual = (task, delay) -> {
      polls.add(task);
      return new CompletableFuture<Void>();
    };
    VirtualTime time = new VirtualTime(T0);
    CountDownLatch inListener = new CountDownLatch(1);
    CountDownLatch releaseListener = new CountDownLatch(1);
    WebhookListener listener = a -> {
      if (a instanceof WebhookActivity.Processed) {
        inListener.countDown();
        await(releaseListener);
        throw error;
      }
    };
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox).handler("order.paid", e -> { }).listener(listener)
          .scheduler(manual).workers(2).build();
      try {
        deliver(receiver, T0, "evt_1", "order.paid");
        p.start();
        polls.take().run();  // claims evt_1; its worker, past its own clock read, waits in the listener
        assertTrue(inListener.await(10, TimeUnit.SECONDS), "the worker reached the listener");
        Thread poller = new Thread(polls.take(), "racing-poller");
        synchronized (time) {
          poller.start();
          spinUntil(() -> poller.getState() == Thread.State.BLOCKED, "the second poll is at its clock read");
          releaseListener.countDown();
          spinUntil(() -> p.lastPollFailure().isPresent(), "the worker broke");
        }
        poller.join(10_000);
        assertEquals(Optional.of(error), p.lastPollFailure(), "a later successful poll does not hide the Error");
        WebhookInboxException later = assertThrows(WebhookInboxException.class, () -> p.processDue(10));
        assertSame(error, later.getCause());
      } finally {
        releaseListener.countDown();
        p.close();
      }
    }
  }

  /**
   * Review rverr: a processDue call went on claiming and running events after an Error had stopped
   * processing (here its own first event's listener threw), and start() on a processor stopped so
   * returned normally and never polled. Now the call throws before its next claim, leaving the rest
   * PENDING for the next processor, and start() refuses, naming the Error.
   */
  @Test
  void aProcessorStoppedByAnErrorClaimsNoMoreInProcessDueAndRefusesToStart() throws Exception {
    InjectedError error = new InjectedError();
    VirtualTime time = new VirtualTime(T0);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      deliver(receiver, T0, "evt_1", "order.paid");
      deliver(receiver, T0, "evt_2", "order.paid");
      deliver(receiver, T0, "evt_3", "order.paid");
      try (WebhookProcessor p = WebhookProcessor.builder(inbox).handler("order.paid", e -> { })
          .listener(throwingOnProcessed(error)).clock(time.clock()).scheduler(time.scheduler()).build()) {
        WebhookInboxException stopped = assertThrows(WebhookInboxException.class, () -> p.processDue(10));
        assertSame(error, stopped.getCause());
        long done = java.util.stream.Stream.of("evt_1", "evt_2", "evt_3")
            .filter(id -> inbox.find("acme", id).orElseThrow().state() == InboxState.DONE).count();
        long pending = java.util.stream.Stream.of("evt_1", "evt_2", "evt_3")
            .filter(id -> inbox.find("acme", id).orElseThrow().state() == InboxState.PENDING).count();
        assertEquals(1, done, "the event whose listener threw was done");
        assertEquals(2, pending, "the others never claimed after the Error, left for the next processor");

        WebhookInboxException refused = assertThrows(WebhookInboxException.class, p::start);
        assertSame(error, refused.getCause(), "start() names the Error instead of a processor that never polls");
      }
    }
  }

  private static void spinUntil(java.util.function.BooleanSupplier done, String what) {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not within 10 s: " + what);
      }
      Thread.onSpinWait();
    }
  }

  private static WebhookReceiver acmeReceiver(WebhookInbox inbox) {
    return WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
        .secret(ReceiverTest.SECRET).build(), inbox).build();
  }

  /** A listener that throws {@code error} once an event is processed. */
  private static WebhookListener throwingOnProcessed(InjectedError error) {
    return a -> {
      if (a instanceof WebhookActivity.Processed) {
        throw error;
      }
    };
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("test latch not released");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
