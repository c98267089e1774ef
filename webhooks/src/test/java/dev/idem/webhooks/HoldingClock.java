package dev.idem.webhooks;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

/**
 * A test clock over another one, whose next reading on one chosen thread waits (uninterruptibly:
 * close() may interrupt that thread) until the test lets it go: a run held at the reading before it
 * records its outcome, so that a test can close the processor or the inbox under it, without sleeps.
 */
final class HoldingClock extends Clock {
  private final Clock delegate;
  private final AtomicReference<Predicate<Thread>> holdOn = new AtomicReference<>();
  /** Counted down when the chosen thread has reached its held reading. */
  final CountDownLatch held = new CountDownLatch(1);
  /**
   * A permit each time a chosen thread has reached its held reading: for a test that holds a
   * thread more than once (choosing it again while it is held, before releasing it).
   */
  final Semaphore holds = new Semaphore(0);
  /** Released by the test to let the held reading go on. */
  final Semaphore release = new Semaphore(0);

  HoldingClock(Clock delegate) {
    this.delegate = delegate;
  }

  void holdNextReadingOn(Thread t) {
    holdOn.set(th -> th == t);
  }

  /** Holds the next reading on a thread {@code which} accepts (one the test has no hold of: a pool's). */
  void holdNextReadingOn(Predicate<Thread> which) {
    holdOn.set(which);
  }

  /** Holds the next reading {@code t} makes inside {@code method} of {@link WebhookProcessor}. */
  void holdNextReadingIn(Thread t, String method) {
    holdOn.set(th -> th == t && Arrays.stream(th.getStackTrace()).anyMatch(
        f -> f.getClassName().equals(WebhookProcessor.class.getName()) && f.getMethodName().equals(method)));
  }

  @Override
  public ZoneId getZone() {
    return delegate.getZone();
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException();
  }

  @Override
  public long millis() {
    return instant().toEpochMilli();
  }

  @Override
  public Instant instant() {
    Predicate<Thread> which = holdOn.get();
    if (which != null && which.test(Thread.currentThread()) && holdOn.compareAndSet(which, null)) {
      held.countDown();
      holds.release();
      release.acquireUninterruptibly();
    }
    return delegate.instant();
  }
}
