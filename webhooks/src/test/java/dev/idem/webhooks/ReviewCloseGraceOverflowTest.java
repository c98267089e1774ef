package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (round 2, 0bebc159): {@link WebhookProcessor.Builder#closeGrace} takes any non-negative
 * Duration, and an app that means "let the handlers finish, however long" gives a huge one. But
 * close() converts it to nanoseconds, which overflow past 292 years:
 *
 * <ul>
 *   <li>a later close() (the new wait for the first one) computes {@code closeGrace + 5 s} in
 *       nanoseconds: a grace within 5 s of the largest one the first close() accepts,
 *       {@code Duration.ofNanos(Long.MAX_VALUE)}, makes every second close() throw
 *       ArithmeticException, although the first one had long finished: try-with-resources after an
 *       explicit close(), the Spring bean's destroy after the lifecycle's stop;
 *   <li>a larger grace ({@code Duration.ofMillis(Long.MAX_VALUE)}, {@code ChronoUnit.FOREVER})
 *       makes the first close() itself throw before it has stopped anything: the heartbeat, the
 *       watchdog, the retry timers and the poll loop are left scheduled (on an app's scheduler, for
 *       as long as the JVM lives), and, the first close() counted as done, a later close() returns
 *       at once without stopping them either.
 * </ul>
 *
 * <p>Fake clock and scheduler; no event, so nothing waits on real time.
 */
class ReviewCloseGraceOverflowTest {
  @TempDir
  Path dir;

  @Test
  void aSecondCloseWithTheLargestGraceDoesNotThrow() {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookProcessor p = WebhookProcessor.builder(inbox).handler("order.paid", e -> { })
          .clock(time.clock()).scheduler(time.scheduler()).owner("p1")
          .closeGrace(Duration.ofNanos(Long.MAX_VALUE)).build();
      p.start();
      time.runDueTasks();
      p.close(); // nothing running: returns at once
      assertDoesNotThrow(p::close, "close() is idempotent: a second call after the first finished returns;"
          + " actual: it overflows closeGrace + 5 s in nanoseconds");
    }
  }

  @Test
  void aHugeGraceStillStopsTheProcessor() {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      WebhookProcessor p = WebhookProcessor.builder(inbox).handler("order.paid", e -> { })
          .clock(time.clock()).scheduler(time.scheduler()).owner("p1")
          .closeGrace(Duration.ofMillis(Long.MAX_VALUE)).build(); // "wait for the handlers, however long"
      p.start();
      time.runDueTasks();
      int scheduledWhileRunning = time.pendingTasks();
      Throwable thrown = null;
      try {
        p.close(); // nothing running: must stop at once
      } catch (RuntimeException e) {
        thrown = e;
      }
      try {
        p.close(); // and a second one, as try-with-resources or a bean destroy makes
      } catch (RuntimeException e) {
        thrown = thrown == null ? e : thrown;
      }
      time.runDueTasks();
      assertEquals(0, time.pendingTasks(), "a closed processor leaves nothing scheduled; actual: "
          + time.pendingTasks() + " task(s) (of " + scheduledWhileRunning + " while running) still scheduled on the"
          + " app's scheduler after close(), which threw " + thrown);
      assertEquals(null, thrown, "close() with nothing running returns");
    }
  }
}
