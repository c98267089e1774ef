package dev.idem.server.internal;

import dev.idem.core.spi.Scheduler;
import dev.idem.server.IdempotencyGuard;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A guard's background purge of records past retention: timed on its scheduler, run on its store
 * executor, and timed again at every interval whatever happened (a listener's exception or Error
 * included), keeping the last failure until a purge succeeds. A failed purge does not make the
 * guard unsafe (expired records are treated as absent anyway), but the store grows until one
 * succeeds.
 *
 * <p>Thread-safe.
 */
public final class PurgeJob {
  // The guard's logger, not this class's: operators set levels and filters on the guard's name.
  private static final Logger LOG = LoggerFactory.getLogger(IdempotencyGuard.class);

  private final Scheduler scheduler;
  private final Executor storeCalls;
  private final Duration interval;
  private final IntSupplier purge;
  private final IntConsumer onPurged;
  private final Consumer<Throwable> onFailure;
  private final BooleanSupplier closed;
  private volatile RuntimeException lastFailure;

  /**
   * @param scheduler times the purges; its tasks only hand the purge over
   * @param storeCalls runs the purge's store call
   * @param interval between the end of one purge and the next; null for none, when the app purges
   *     itself
   * @param purge deletes the records past retention, and returns how many; the store's call only,
   *     so that what a listener throws is never taken for a failed purge
   * @param onPurged hears how many records each purge deleted, after {@link #lastFailure()} is
   *     cleared; what it throws, an Error included, is logged and ignored
   * @param onFailure hears the cause of each failed purge, after {@link #lastFailure()} holds it;
   *     what it throws, an Error included, is logged and ignored
   * @param closed true once the guard is closed: no purge starts after it
   */
  public PurgeJob(Scheduler scheduler, Executor storeCalls, Duration interval, IntSupplier purge,
      IntConsumer onPurged, Consumer<Throwable> onFailure, BooleanSupplier closed) {
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.storeCalls = Objects.requireNonNull(storeCalls, "storeCalls");
    this.interval = interval;
    this.purge = Objects.requireNonNull(purge, "purge");
    this.onPurged = Objects.requireNonNull(onPurged, "onPurged");
    this.onFailure = Objects.requireNonNull(onFailure, "onFailure");
    this.closed = Objects.requireNonNull(closed, "closed");
  }

  /** Times the first purge, one interval from now; does nothing without an interval. */
  public void start() {
    if (interval != null) {
      schedule();
    }
  }

  /** @return the failure of the last purge, cleared by the next one that succeeds; null if none */
  public RuntimeException lastFailure() {
    return lastFailure;
  }

  /** Times the next purge; like a renewal, its store call runs on the store executor. */
  private void schedule() {
    if (closed.getAsBoolean()) {
      return;
    }
    try {
      scheduler.schedule(this::handOver, interval);
    } catch (RuntimeException | Error e) {
      if (!closed.getAsBoolean()) {
        failed(new IllegalStateException("the next purge could not be scheduled: " + e, e), e);
      }
    }
  }

  private void handOver() {
    if (closed.getAsBoolean()) {
      return;
    }
    try {
      storeCalls.execute(this::run);
    } catch (RuntimeException | Error e) {
      if (!closed.getAsBoolean()) {
        failed(new IllegalStateException("the store executor refused the purge: " + e, e), e);
        schedule();
      }
    }
  }

  private void run() {
    if (closed.getAsBoolean()) {
      return;
    }
    // The next purge is timed whatever this one, or a listener hearing it, throws: escaping, it
    // ended the job for good, unseen (the executor swallows it), while lastFailure read like one
    // failure that the next purge would clear.
    try {
      int n;
      try {
        n = purge.getAsInt();
      } catch (RuntimeException e) {
        failed(e, e);
        return;
      } catch (Error e) {
        failed(new IllegalStateException("the purge failed with " + e, e), e);
        return;
      }
      lastFailure = null;
      LOG.debug("Purged {} idempotency records past retention", n);
      tell(() -> onPurged.accept(n));
    } finally {
      schedule();
    }
  }

  private void failed(RuntimeException failure, Throwable cause) {
    lastFailure = failure;
    LOG.error("The idempotency purge failed; records past retention stay until it succeeds", cause);
    tell(() -> onFailure.accept(cause));
  }

  /**
   * Tells a listener of the app's, and ignores what it throws, an Error included (a metrics binder
   * built against another Micrometer throws NoSuchMethodError): on the store executor nobody would
   * see it, and the purge would stop. The JVM's own failure ({@link FatalErrors}) too, unlike on a
   * request thread: passed on from here it would reach only the executor's future, which no one
   * reads, so the log is the one place it is seen.
   */
  private static void tell(Runnable listener) {
    try {
      listener.run();
    } catch (RuntimeException | Error e) {
      LOG.error("A guard listener failed on a purge event; ignored, the purge keeps its schedule", e);
    }
  }
}
