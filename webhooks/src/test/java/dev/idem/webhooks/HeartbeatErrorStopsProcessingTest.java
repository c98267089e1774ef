package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An Error in a lease renewal (an OutOfMemoryError while the heartbeat writes the leases) is a
 * background failure: it stops the processor and is named to the next call, as an Error while an
 * outcome is recorded is, instead of ending up unseen in the scheduler's Future (the standard: no
 * background failure dies silently). The heartbeat goes on renewing the run still going, so no other
 * processor runs its event beside it meanwhile.
 *
 * <p>Before the change the Error left the renewal task: the test's scheduler (VirtualTime, which
 * throws a task's Error on to whoever advances it) threw it from {@code advance}, and a real
 * scheduler kept it in a Future that no one reads. Fake clock and scheduler; the worker is a real
 * thread, waited for on latches, never a sleep.
 */
class HeartbeatErrorStopsProcessingTest {
  @TempDir
  Path dir;

  @Test
  void anErrorInALeaseRenewalStopsTheProcessorAndIsNamedToTheNextCall() throws Exception {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    OutOfMemoryError simulated = new OutOfMemoryError("simulated: the heap ran out while renewing leases");
    AtomicReference<OutOfMemoryError> armed = new AtomicReference<>();
    Clock renewalFails = new FailingInRenewal(time.clock(), armed);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch unblock = new CountDownLatch(1);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p1 = WebhookProcessor.builder(inbox)
          .handler("report.build", e -> {
            entered.countDown();
            assertTrue(unblock.await(1, TimeUnit.MINUTES), "the test let the handler end");
          })
          .lease(Duration.ofMinutes(1)).clock(renewalFails).scheduler(time.scheduler()).owner("p1").build();
      try {
        p1.start();
        deliver(receiver, time, "evt_1", "report.build");
        time.runDueTasks();
        assertTrue(entered.await(30, TimeUnit.SECONDS), "the handler started");

        armed.set(simulated);
        time.advance(Duration.ofSeconds(20)); // the first beat (a third of the lease): its renewal fails
        assertEquals(null, armed.get(), "the renewal read the clock and failed");

        assertSame(simulated, p1.lastPollFailure().orElseThrow(), "the Error is the processor's failure");
        WebhookInboxException next = assertThrows(WebhookInboxException.class, () -> p1.processDue(1));
        assertSame(simulated, next.getCause(), "named to the next call");

        // The handler still runs: the next beats renew its lease, and another processor, ten leases
        // later, finds nothing to run.
        time.advance(Duration.ofMinutes(10));
        WebhookProcessor p2 = WebhookProcessor.builder(inbox).handler("report.build", e -> { })
            .lease(Duration.ofMinutes(1)).clock(time.clock()).owner("p2").build();
        try (p2) {
          assertEquals(0, p2.processDue(1), "the event still leased to p1, whose handler runs");
        }
        assertEquals(InboxState.PROCESSING, inbox.find("acme", "evt_1").orElseThrow().state());
      } finally {
        unblock.countDown();
        p1.close();
      }
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state(),
          "the run that went on through the failed renewal recorded its outcome");
    }
  }

  /** The clock that throws the armed Error once, to the lease renewal alone (read from the stack). */
  private static final class FailingInRenewal extends Clock {
    private final Clock clock;
    private final AtomicReference<OutOfMemoryError> armed;

    FailingInRenewal(Clock clock, AtomicReference<OutOfMemoryError> armed) {
      this.clock = clock;
      this.armed = armed;
    }

    @Override
    public long millis() {
      if (armed.get() != null && StackWalker.getInstance().walk(frames -> frames.anyMatch(
          f -> f.getClassName().endsWith(".LeaseHeartbeat") && f.getMethodName().equals("renew")))) {
        throw armed.getAndSet(null);
      }
      return clock.millis();
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis());
    }

    @Override
    public ZoneId getZone() {
      return clock.getZone();
    }

    @Override
    public Clock withZone(ZoneId zone) {
      throw new UnsupportedOperationException();
    }
  }
}
