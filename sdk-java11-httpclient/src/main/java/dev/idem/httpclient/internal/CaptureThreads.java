package dev.idem.httpclient.internal;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where a keyed {@code sendAsync} reads its request body for the journal and begins its
 * operation, so that the caller's thread does neither: a body publisher may read a stream inside
 * its {@code subscribe} ({@code BodyPublishers.ofInputStream} does), for as long as the stream
 * takes, and the journal's begin may wait for a disk sync. The JDK client's own {@code sendAsync}
 * publishes the body on the client's executor, and so does this: the app's client's executor, if
 * it has one; otherwise threads of Idem's own, as the JDK client has its own when given none.
 *
 * <p>Those threads are daemon threads named {@code idem-httpclient-body-N-M}, made on first use
 * (a client used only with {@code send} starts none), as many as calls read bodies at once (a
 * stalled body holds one, as it holds one of the JDK client's), and stopped after 30 s idle; so
 * nothing needs shutting down. They also deliver a capture's timeout ({@link #timeouts()}), for
 * every call. Thread-safe.
 */
public final class CaptureThreads implements Executor {
  /** How long an idle thread of Idem's own lives. */
  static final Duration IDLE = Duration.ofSeconds(30);
  /** Names threads only; nothing else depends on it. */
  private static final AtomicInteger CLIENTS = new AtomicInteger();

  private final Executor app;
  private ThreadPoolExecutor own; // guarded by this; made on first use

  /**
   * @param client the app's client, whose executor is used if it has one
   */
  public CaptureThreads(HttpClient client) {
    this.app = client.executor().orElse(null);
  }

  /**
   * Runs {@code task} on the app's client's executor, or on Idem's own threads.
   *
   * @throws java.util.concurrent.RejectedExecutionException if the app's executor refuses it
   */
  @Override
  public void execute(Runnable task) {
    (app != null ? app : own()).execute(task);
  }

  /**
   * Idem's own threads, whoever runs the reads: where a capture's timeout is delivered, since a
   * thread of the app's executor may be the one a stalled body blocks.
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
      // No queue: each read gets a thread at once, so a stalled body never holds up another's.
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
