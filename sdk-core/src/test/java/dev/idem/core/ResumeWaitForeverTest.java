package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Found by a review on 2026-12-04.
 *
 * <p>{@code resumePending(handlers, waitForLeased)} documents only "IllegalArgumentException if
 * waitForLeased is negative", so "wait for the dead process's leases however long they take" is
 * naturally {@code ChronoUnit.FOREVER.getDuration()}. {@code PendingResumer.resumeWaiting} computes
 * {@code clock.instant().plus(waitFor)} before anything else and throws
 * {@code DateTimeException}/{@code ArithmeticException} (an unchecked exception the method does
 * not document) without resuming anything, not even the operations that are due now.
 */
class ResumeWaitForeverTest {
  private static final Duration LEASE = Duration.ofMinutes(2);
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor(String owner) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5).owner(owner).leaseFor(LEASE)
        .build();
  }

  @Test
  void waitingForeverForForeignLeasesWaitsInsteadOfThrowingAnOverflow() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    executor("pod-a").enqueue(op);
    journal.claim(op.id(), "pod-a", time.now(), LEASE);  // pod-a died holding the lease
    FakeHost host = new FakeHost(time, (key, n, now) -> Reply.status(201, Map.of()));
    Map<String, ResumeHandler> handlers = Map.of("create-order", ResumeHandler.of(host, o -> {}, f -> {}));

    // Expected: one pass, a nap until the lease expires, a second pass that resumes it.
    // Before the fix: java.time.DateTimeException / ArithmeticException from Instant.plus.
    ResumeSummary summary = assertDoesNotThrow(
        () -> executor("pod-b").resumePending(handlers, ChronoUnit.FOREVER.getDuration()));

    assertEquals(1, summary.succeeded(), summary.toString());
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
  }
}
