package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.Scheduler;
import dev.idem.testkit.webhook.WebhookSigner;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15: an Error outside a handler (here a listener's, thrown while the outcome is recorded)
 * killed a worker thread of the started processor, unseen by the app: nothing said processing had
 * a problem. Now background processing stops, {@link WebhookProcessor#lastPollFailure()} returns
 * the Error, and {@link WebhookProcessor#processDue} fails fast, naming it. (A handler's own Error
 * is that event's failure, recorded and retried like any other.)
 */
class ProcessorErrorTest {
  static final class InjectedError extends Error {
    InjectedError() {
      super("injected");
    }
  }

  @TempDir
  Path dir;

  @Test
  void aListenersErrorOnAWorkerStopsProcessingAndIsReportedNotLost() throws Exception {
    InjectedError error = new InjectedError();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookReceiver receiver = acmeReceiver(inbox);
      WebhookProcessor p = WebhookProcessor.builder(inbox).handler("order.paid", e -> { })
          .listener(throwingOnProcessed(error, null)).pollInterval(Duration.ofMillis(20)).build();
      try {
        p.start();
        deliver(receiver, "evt_1");
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
   * interleaving is forced: the poll waits inside its clock until the worker has broken.
   */
  @Test
  void aPollThatFinishesAfterTheWorkerBrokeDoesNotHideTheError() throws Exception {
    InjectedError error = new InjectedError();
    BlockingQueue<Runnable> polls = new LinkedBlockingQueue<>();
    Scheduler manual = (task, delay) -> {
      polls.add(task);
      return new CompletableFuture<Void>();
    };
    CountDownLatch pollInClock = new CountDownLatch(1);
    CountDownLatch releasePoll = new CountDownLatch(1);
    CountDownLatch releaseListener = new CountDownLatch(1);
    Clock clock = new Clock() {
      @Override
      public ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(ZoneId zone) {
        return this;
      }

      @Override
      public Instant instant() {
        if (Thread.currentThread().getName().equals("racing-poller")) {
          pollInClock.countDown();
          await(releasePoll);
        }
        return Instant.now();
      }
    };
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookReceiver receiver = acmeReceiver(inbox);
      WebhookProcessor p = WebhookProcessor.builder(inbox).handler("order.paid", e -> { })
          .listener(throwingOnProcessed(error, releaseListener)).scheduler(manual).clock(clock).workers(2).build();
      try {
        deliver(receiver, "evt_1");
        p.start();
        polls.take().run();  // claims evt_1; its worker waits in the listener
        Runnable racingPoll = polls.take();
        Thread poller = new Thread(racingPoll, "racing-poller");
        poller.start();
        assertTrue(pollInClock.await(10, TimeUnit.SECONDS), "the second poll started");
        releaseListener.countDown();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (p.lastPollFailure().isEmpty() && System.nanoTime() < deadline) {
          Thread.onSpinWait();
        }
        releasePoll.countDown();
        poller.join(10_000);
        assertEquals(Optional.of(error), p.lastPollFailure(), "a later successful poll does not hide the Error");
        WebhookInboxException later = assertThrows(WebhookInboxException.class, () -> p.processDue(10));
        assertSame(error, later.getCause());
      } finally {
        releasePoll.countDown();
        releaseListener.countDown();
        p.close();
      }
    }
  }

  private static WebhookReceiver acmeReceiver(WebhookInbox inbox) {
    return WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
        .secret(ReceiverTest.SECRET).build(), inbox).build();
  }

  /** A listener that throws {@code error} once an event is processed, after {@code gate} opens (if given). */
  private static WebhookListener throwingOnProcessed(InjectedError error, CountDownLatch gate) {
    return a -> {
      if (a instanceof WebhookActivity.Processed) {
        if (gate != null) {
          await(gate);
        }
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

  private static void deliver(WebhookReceiver receiver, String id) {
    byte[] body = WebhookSigner.jsonEvent(id, "order.paid", "{}");
    Map<String, List<String>> h = new TreeMap<>();
    WebhookSigner.STANDARD_WEBHOOKS.sign(ReceiverTest.SECRET, id, "order.paid", java.time.Instant.now(), body)
        .headers().forEach((k, v) -> h.put(k, List.of(v)));
    assertEquals(200, receiver.handle("POST", h, body).status());
  }
}
