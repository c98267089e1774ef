package dev.idem.httpclient.internal;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where a keyed call's body publisher is cancelled once its read ({@link BodyCapture}) is over its
 * bound: threads of Idem's own, never the thread a stalled body publisher may be blocking (the
 * caller's, or one of the app client's executor), nor the JDK's shared timer thread.
 *
 * <p>Daemon threads named {@code idem-httpclient-body-N-M}, made on first use, at most
 * {@code max(2, processors)} per client (as Idem's other pools), stopped after 30 s idle; so
 * nothing needs shutting down. Cancels beyond the cap wait for a thread, in a queue holding one
 * small task per call whose body read is over its bound, so no more than the calls themselves.
 * A cancel is the app's code ({@code Subscription.cancel} should return at once, Reactive Streams
 * rule 3.5, but one that closes a stream another thread is stuck reading may block): when the cap
 * of them block, the next wait in the queue. That delays only other cancels, never a call: the
 * capture has already failed, on the JDK's timer thread, before its cancel is queued here, and
 * the app's dependents of that failure run on the default async pool ({@link CallEngine} hands
 * them there, as the JDK's {@code sendAsync} does). Thread-safe.
 */
public final class CaptureThreads {
  /** How long an idle thread lives. */
  static final Duration IDLE = Duration.ofSeconds(30);
  /** The most threads of one client: cancels should be short, so a few serve any burst. */
  static final int MAX_THREADS = Math.max(2, Runtime.getRuntime().availableProcessors());
  /** Names threads only; nothing else depends on it. */
  private static final AtomicInteger CLIENTS = new AtomicInteger();

  private ThreadPoolExecutor own; // guarded by this; made on first use

  /**
   * Idem's own threads, where the publisher of a timed-out capture is cancelled. Its
   * {@code execute} may throw (a thread that cannot be made); the capture names that in its failure.
   *
   * @return an executor on Idem's own threads
   */
  public Executor cancels() {
    return task -> own().execute(task);
  }

  private synchronized ThreadPoolExecutor own() {
    if (own == null) {
      int client = CLIENTS.incrementAndGet();
      AtomicInteger threads = new AtomicInteger();
      own = new ThreadPoolExecutor(MAX_THREADS, MAX_THREADS, IDLE.toNanos(), TimeUnit.NANOSECONDS,
          new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "idem-httpclient-body-" + client + "-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
          });
      own.allowCoreThreadTimeOut(true);
    }
    return own;
  }
}
