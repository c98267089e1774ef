package dev.idem.httpclient.internal;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the timeout of a keyed call's body read ({@link BodyCapture}) is delivered: threads of
 * Idem's own, never the thread a stalled body publisher may be blocking (the caller's, or one of
 * the app client's executor), nor the JDK's shared timer thread.
 *
 * <p>Daemon threads named {@code idem-httpclient-body-N-M}, made on first use, at most
 * {@code max(2, processors)} per client (as Idem's other pools), stopped after 30 s idle; so
 * nothing needs shutting down. Deliveries beyond the cap wait for a thread, in a queue holding one
 * small task per call whose body read is over its bound, so no more than the calls themselves.
 * The wait is short and cannot become a deadlock because a delivery runs no app code: it cancels
 * the publisher's subscription (which must return at once, Reactive Streams rule 3.5) and fails
 * the capture, whose app-facing dependents run elsewhere ({@link CallEngine} hands them to the
 * default async pool, as the JDK's {@code sendAsync} does). Thread-safe.
 */
public final class CaptureThreads {
  /** How long an idle thread lives. */
  static final Duration IDLE = Duration.ofSeconds(30);
  /** The most threads of one client: deliveries are short, so a few serve any burst. */
  static final int MAX_THREADS = Math.max(2, Runtime.getRuntime().availableProcessors());
  /** Names threads only; nothing else depends on it. */
  private static final AtomicInteger CLIENTS = new AtomicInteger();

  private ThreadPoolExecutor own; // guarded by this; made on first use

  /**
   * Idem's own threads, where a capture's timeout is delivered. Its {@code execute} may throw
   * (a thread that cannot be made); the caller fails the capture with it.
   *
   * @return an executor on Idem's own threads
   */
  public Executor timeouts() {
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
