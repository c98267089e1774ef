package dev.idem.server.internal;

import dev.idem.core.spi.Scheduler;
import dev.idem.server.IdempotencyGuard;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A guard's background purge of records past retention: timed on its scheduler, run on its store
 * executor, and timed again at every interval whatever happened, keeping the last failure until a
 * purge succeeds. A failed purge does not make the guard unsafe (expired records are treated as
 * absent anyway), but the store grows until one succeeds.
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
  private final Consumer<Throwable> onFailure;
  private final BooleanSupplier closed;
  private volatile RuntimeException lastFailure;

  /**
   * @param scheduler times the purges; its tasks only hand the purge over
   * @param storeCalls runs the purge's store call
   * @param interval between the end of one purge and the next; null for none, when the app purges
   *     itself
   * @param purge deletes the records past retention, and returns how many
   * @param onFailure hears the cause of each failed purge, after {@link #lastFailure()} holds it
   * @param closed true once the guard is closed: no purge starts after it
   */
  public PurgeJob(Scheduler scheduler, Executor storeCalls, Duration interval, IntSupplier purge,
      Consumer<Throwable> onFailure, BooleanSupplier closed) {
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.storeCalls = Objects.requireNonNull(storeCalls, "storeCalls");
    this.interval = interval;
    this.purge = Objects.requireNonNull(purge, "purge");
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
    try {
      int n = purge.getAsInt();
      lastFailure = null;
      LOG.debug("Purged {} idempotency records past retention", n);
    } catch (RuntimeException e) {
      failed(e, e);
    } catch (Error e) {
      // Rethrown, the purge job would stop for good, unseen: record it and keep the schedule.
      failed(new IllegalStateException("the purge failed with " + e, e), e);
    }
    schedule();
  }

  private void failed(RuntimeException failure, Throwable cause) {
    lastFailure = failure;
    onFailure.accept(cause);
    LOG.error("The idempotency purge failed; records past retention stay until it succeeds", cause);
  }
}
