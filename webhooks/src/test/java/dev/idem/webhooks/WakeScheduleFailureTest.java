package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Regression test (2026-12-08, after a reviewer's remark): the scheduler fails the poll that an
 * accepted delivery asks for ({@code WebhookInbox.accept} wakes the processor, on the receiver's
 * thread), as a lazily threaded {@code ScheduledThreadPoolExecutor} does when the JVM cannot start
 * its next thread.
 *
 * <p>Expected: the event is durable, so the provider is answered 200; the failure stops the
 * processor visibly ({@code lastPollFailure()} returns it, {@code processDue} throws), as any Error
 * on its timers does. Before the fix the Error went out of {@code accept} on the receiver's thread
 * (the provider got a failure for an event the inbox kept), and the poll loop, which had cancelled
 * its next poll before asking for the new one, kept the cancelled one as its next: the processor
 * never polled again, and nothing said so.
 */
class WakeScheduleFailureTest {
  @TempDir
  Path dir;

  static Stream<Arguments> failures() {
    return Stream.of(
        Arguments.of(Named.of("queued, then no thread",
            (UnaryOperator<Scheduler>) q -> FailingScheduler.queueThenFail(q, "PollLoop", "wake", 1))),
        Arguments.of(Named.of("no heap, nothing queued",
            (UnaryOperator<Scheduler>) q -> FailingScheduler.failBeforeQueueing(q, "PollLoop", "wake", 1))));
  }

  @ParameterizedTest
  @MethodSource("failures")
  void theDeliveryIsAnswered200AndTheProcessorStopsVisibly(UnaryOperator<Scheduler> failing) {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    Scheduler scheduler = failing.apply(time.scheduler());
    AtomicInteger ran = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookReceiver receiver = receiver(inbox, time);
      WebhookProcessor p = WebhookProcessor.builder(inbox).handler("order.paid", e -> ran.incrementAndGet())
          .clock(time.clock()).scheduler(scheduler).owner("p1").build();
      try {
        p.start();
        time.runDueTasks(); // the first poll: nothing yet; the next is scheduled at the interval

        deliver(receiver, time, "evt_1"); // asserts the 200

        assertEquals(InboxState.PENDING, inbox.find("acme", "evt_1").orElseThrow().state());
        Throwable failure = p.lastPollFailure().orElse(null);
        assertSame(((FailingScheduler) scheduler).error(), failure, "the processor stopped, and says why");
        WebhookInboxException thrown = assertThrows(WebhookInboxException.class, () -> p.processDue(1));
        assertSame(failure, thrown.getCause(), "processDue names the failure that stopped the processor");
        time.advance(Duration.ofMinutes(1));
        assertEquals(0, ran.get(), "a stopped processor runs nothing; the event waits for the next one");
      } finally {
        p.close();
      }
    }
  }
}
