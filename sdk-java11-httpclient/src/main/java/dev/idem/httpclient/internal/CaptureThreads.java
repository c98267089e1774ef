package dev.idem.httpclient.internal;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the timeout of a keyed call's body read ({@link BodyCapture}) is delivered: threads of
 * Idem's own, never the thread a stalled body publisher may be blocking (the caller's, or one of
 * the app client's executor), nor the JDK's shared timer thread.
 *
 * <p>Daemon threads named {@code idem-httpclient-body-N-M}, made on first use, as many as
 * timeouts are being delivered at once (each delivery is short: it fails the call and cancels the
 * publisher's subscription), stopped after 30 s idle; so nothing needs shutting down. Thread-safe.
 */
public final class CaptureThreads {
  /** How long an idle thread lives. */
  static final Duration IDLE = Duration.ofSeconds(30);
  /** Names threads only; nothing else depends on it. */
  private static final AtomicInteger CLIENTS = new AtomicInteger();

  private ThreadPoolExecutor own; // guarded by this; made on first use

  /**
   * Idem's own threads, where a capture's timeout is delivered.
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
      // No queue: a delivery never waits behind another.
      own = new ThreadPoolExecutor(0, Integer.MAX_VALUE, IDLE.toNanos(), TimeUnit.NANOSECONDS, new SynchronousQueue<>(),
          r -> {
            Thread t = new Thread(r, "idem-httpclient-body-" + client + "-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
          });
    }
    return own;
  }
}
