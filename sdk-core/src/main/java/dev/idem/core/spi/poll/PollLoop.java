package dev.idem.core.spi.poll;

import dev.idem.core.spi.Scheduler;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One background poll loop, for Idem's modules that look for due work on a schedule (the outbox
 * dispatcher, the webhook processor): it runs one poll at a time on a {@link Scheduler}, at once
 * after {@link #start()}, then every interval; {@link #wake()} asks for a poll now (new work
 * arrived, a slot freed up). The poll says how it went: {@link #progressed()} or
 * {@link #noProgress}, on its own thread or later from whichever thread learns it; without
 * progress the interval doubles up to the maximum, with one WARN per outage and one INFO when
 * progress comes back. A {@link RuntimeException} from the poll counts as no progress, and a wake
 * that arrived during that poll waits for the interval instead of polling again at once. An {@link Error} from the poll, or from the
 * scheduler as it takes a poll (a {@code ScheduledThreadPoolExecutor} that cannot start its next
 * thread; from {@link #wake()} it is not thrown to the waking thread), or one the owner hands to
 * {@link #broken}, stops the loop for good: what it left behind is unknown, so the loop does not go
 * on half-working; {@link #brokenBy()} keeps it for the owner's next call to report, and the
 * owner's {@link Builder#onBroken} handler says so.
 *
 * <pre>{@code
 * PollLoop loop = PollLoop.builder(MyEngine.class, "idem-my-engine", this::pollOnce)
 *     .clock(clock).interval(Duration.ofSeconds(1)).maxInterval(Duration.ofMinutes(1))
 *     .build();
 * loop.start();
 * }</pre>
 *
 * <p>All timing uses the injected {@link Clock} and {@link Scheduler}; without a scheduler, the
 * loop owns one daemon thread, {@code <threads>-poller-1}, which {@link #close()} shuts down. This
 * is an extension point for Idem's own modules, not for applications.
 *
 * <p>Thread-safe. The poll runs without any lock of the loop's held, and the loop never calls
 * the owner (the poll, the broken handler) while holding its lock, so the owner may call
 * {@link #wake()}, {@link #start()} and the backoff methods while holding its own.
 */
public final class PollLoop implements AutoCloseable {
  private final Logger log;
  private final String name;
  private final Runnable poll;
  private final Clock clock;
  private final Scheduler scheduler;
  private final ScheduledExecutorService ownedScheduler;  // null if the builder was given a scheduler
  private final PollBackoff backoff;
  private final BiConsumer<Error, String> onBroken;

  private final Object lock = new Object();
  private boolean started;
  private boolean closed;
  private boolean refused;  // the scheduler refused a poll: it takes no more
  private boolean polling;  // at most one poll at a time
  private boolean pollAgain;  // woken while polling
  private Next next;  // the next poll, if one is scheduled
  /** The Error that stopped this loop, if one did; written under {@code lock}, read without it. */
  private volatile Error brokenBy;
  /**
   * What the scheduler threw when it failed to take the poll after the last one, leaving none
   * scheduled (null once a poll is scheduled again): the loop is offline until then.
   */
  private volatile RuntimeException unscheduledBy;

  private PollLoop(Builder b) {
    this.log = LoggerFactory.getLogger(b.owner);
    this.name = b.owner.getSimpleName();
    this.poll = b.poll;
    this.clock = b.clock;
    if (b.scheduler != null) {
      this.scheduler = b.scheduler;
      this.ownedScheduler = null;
    } else {
      this.ownedScheduler = Executors.newSingleThreadScheduledExecutor(daemonThreads(b.threads + "-poller"));
      this.scheduler = Scheduler.of(ownedScheduler);
    }
    this.backoff = new PollBackoff(log, name, b.interval, b.maxInterval);
    this.onBroken = b.onBroken != null ? b.onBroken
        : (error, where) -> log.error("{} stopped: {} in {}", name, error.toString(), where, error);
  }

  /**
   * A builder for a loop that calls {@code poll} for each poll.
   *
   * @param owner the class that owns the loop: the log lines go to its logger and begin with its
   *     simple name
   * @param threads the name prefix of the threads the loop owns, such as {@code idem-outbox}
   * @param poll one poll; it reports {@link #progressed()} or {@link #noProgress} (from its own
   *     thread or later, from whatever thread learns the result). It must not block for long.
   * @return a builder with the defaults listed on each setter
   * @throws NullPointerException if an argument is null
   */
  public static Builder builder(Class<?> owner, String threads, Runnable poll) {
    return new Builder(owner, threads, poll);
  }

  /**
   * A thread factory for the daemon threads a module owns, named {@code <prefix>-1},
   * {@code <prefix>-2}, ...: daemon, so that an app that forgets to close never hangs at exit.
   *
   * @param prefix the name prefix, such as {@code idem-outbox-worker}
   * @return a new factory with its own numbering
   */
  public static ThreadFactory daemonThreads(String prefix) {
    Objects.requireNonNull(prefix, "prefix");
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * Starts polling: a first poll at once, then every interval.
   *
   * @throws IllegalStateException if already started or closed
   * @throws Error what the scheduler threw as it took the first poll; the loop is broken then
   */
  public void start() {
    Error failed;
    synchronized (lock) {
      if (started || closed) {
        throw new IllegalStateException(name + "'s poll loop was " + (closed ? "closed" : "started") + " already");
      }
      started = true;
      failed = scheduleLocked(Duration.ZERO, true);
    }
    if (failed != null) {
      onBroken.accept(failed, "its scheduler");
      throw failed;
    }
  }

  /**
   * Asks for a poll now, for new work or a freed slot: one that runs at once, or, while a poll is
   * running, one more right after it (unless that poll throws). Ignored before
   * {@link #start()}, after {@link #close()} and once broken.
   */
  public void wake() {
    Error failed;
    synchronized (lock) {
      failed = scheduleLocked(Duration.ZERO, false);
    }
    if (failed != null) {
      // Not thrown to the caller, which only asked for a poll (the thread of a webhook receiver
      // that has just stored a delivery durably): the loop is broken, and its owner says so.
      onBroken.accept(failed, "its scheduler");
    }
  }

  /**
   * Reports progress: the interval goes back to the base, and an offline loop comes back online
   * (one INFO). Ignored once broken: a poll that was running when the loop broke does not announce
   * a recovery.
   */
  public void progressed() {
    if (brokenBy == null) {
      backoff.progressed();
    }
  }

  /**
   * Reports a poll without progress (the store cannot be read, the target does not answer): the
   * interval doubles up to the maximum, and the first one of an outage logs one WARN.
   *
   * @param why what went wrong and what became of the work, for the WARN
   * @param cause the exception behind it, logged with the WARN and returned by
   *     {@link #lastFailure()}; null if none
   */
  public void noProgress(String why, Throwable cause) {
    backoff.noProgress(Objects.requireNonNull(why, "why"), cause);
  }

  /**
   * True from a poll without progress until the next progress, and while no poll is scheduled
   * because the scheduler failed to take the one after the last (until a wake's is taken).
   *
   * @return whether the loop is backed off
   */
  public boolean isOffline() {
    return unscheduledBy != null || backoff.isOffline();
  }

  /**
   * The wait before the next regular poll.
   *
   * @return between the interval and the maximum interval
   */
  public Duration interval() {
    return backoff.interval();
  }

  /**
   * What stopped the loop, else what keeps it offline.
   *
   * @return the Error that broke the loop, if one did (it stays, whatever happens next); else the
   *     cause given with the last poll without progress since the loop last made progress, if any
   */
  public Optional<Throwable> lastFailure() {
    Error broken = brokenBy;
    RuntimeException unscheduled = unscheduledBy;
    return Optional.ofNullable(broken != null ? broken : unscheduled != null ? unscheduled : backoff.failure());
  }

  /**
   * The Error that stopped the loop: the owner names it in the answer to the next call.
   *
   * @return the first Error given to {@link #broken} or thrown by a poll, if any
   */
  public Optional<Error> brokenBy() {
    return Optional.ofNullable(brokenBy);
  }

  /**
   * Stops the loop for good after an Error (OutOfMemoryError, StackOverflowError, a callback's
   * own) on one of the owner's threads, so that it does not die unseen there: the first Error is
   * kept for {@link #brokenBy()}, no poll runs any more, and the {@link Builder#onBroken} handler
   * runs (with no lock held) for every Error given. The owner still calls {@link #close()}.
   *
   * @param error the Error
   * @param where where it happened, for the log: "its poller", "a delivery", ...
   */
  public void broken(Error error, String where) {
    Objects.requireNonNull(error, "error");
    synchronized (lock) {
      if (brokenBy == null) {
        brokenBy = error;
      }
      cancelLocked();
    }
    onBroken.accept(error, where);
  }

  /**
   * The scheduler the polls run on: the given one, or the one this loop owns (shut down by
   * {@link #close()}), for the owner's other timers.
   *
   * @return the scheduler
   */
  public Scheduler scheduler() {
    return scheduler;
  }

  /**
   * Stops polling: no poll starts any more, and the thread the loop owns (if any) is shut down,
   * interrupting a poll that is running. Returns at once, without waiting for a running poll; an
   * owner that calls it from inside its poll is fine. Idempotent.
   */
  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      cancelLocked();
    }
    if (ownedScheduler != null) {
      ownedScheduler.shutdownNow();
    }
  }

  // ---------------------------------------------------------------------------------------------

  private void runPoll() {
    synchronized (lock) {
      next = null;
      if (closed || brokenBy != null) {
        return;
      }
      if (polling) {
        pollAgain = true;
        return;
      }
      polling = true;
      pollAgain = false;
    }
    boolean failed = false;
    try {
      poll.run();
    } catch (RuntimeException e) {
      failed = true;
      backoff.noProgress("a poll failed (" + e + ")", e);
    } catch (Error e) {
      broken(e, "its poller");
    } finally {
      Error unscheduled;
      synchronized (lock) {
        polling = false;
        // After a failed poll, a wake during it waits for the interval: polling again at once
        // would hammer a store that is down.
        boolean again = pollAgain && !failed;
        pollAgain = false;
        unscheduled = scheduleLocked(again ? Duration.ZERO : backoff.interval(), false);
      }
      if (unscheduled != null) {
        onBroken.accept(unscheduled, "its scheduler");
      }
    }
  }

  /**
   * Schedules a poll after {@code delay} unless one is already due no later.
   *
   * @param rethrowFailure whether a RuntimeException from the scheduler (but a rejection) is thrown
   *     to the caller ({@link #start()}); else logged, and kept for {@link #lastFailure()} if no
   *     poll stands
   * @return null; or the Error the scheduler threw (a lazily threaded
   *     {@code ScheduledThreadPoolExecutor} that cannot start its next thread), which has broken
   *     the loop: the caller hands it to {@link Builder#onBroken} once the lock is let go
   */
  private Error scheduleLocked(Duration delay, boolean rethrowFailure) {
    if (!started || closed || refused || brokenBy != null) {
      return null;
    }
    if (polling) {
      pollAgain |= delay.isZero();
      return null;
    }
    Instant due = clock.instant().plus(delay);
    Next old = next;
    if (old != null && !old.due().isAfter(due)) {
      return null;
    }
    // The new poll is taken before the one it replaces is cancelled: a scheduler that fails to take
    // it leaves the regular poll standing (cancelled first, it was lost, and the loop never polled
    // again while it said nothing).
    Future<?> task;
    try {
      task = scheduler.schedule(this::runPoll, delay);
    } catch (Error e) {
      // What it queued, if anything, finds the loop broken and returns. Broken, not left silent:
      // no poll runs any more, and the owner's next call says why.
      brokenBy = e;
      cancelLocked();
      return e;
    } catch (RejectedExecutionException e) {
      // A scheduler the app shut down before closing the owner: no poll can run any more. Said
      // once, since nothing is scheduled after this.
      cancelLocked();
      refused = true;
      log.warn("{}: its scheduler refused the next poll ({}); polling has stopped. Close the {} before its"
          + " scheduler", name, e.toString(), name);
      return null;
    } catch (RuntimeException e) {
      // Any other failure of the app's scheduler. From start(), thrown: nothing polls. Otherwise
      // the poll that stands still runs, and only this wake is lost (said at WARN); with none
      // standing (the reschedule after a poll), nothing polls until a wake's schedule succeeds, and
      // until then the loop shows as offline, with this as its last failure, rather than go quiet.
      if (rethrowFailure) {
        throw e;
      }
      if (old != null) {
        log.warn("{}: its scheduler failed to take the poll a wake asked for ({}); the next regular poll stands",
            name, e.toString());
      } else {
        // Kept apart from the backoff, whose failure a later progress report (an outbox delivery
        // ending well) would clear while nothing polls.
        unscheduledBy = e;
        log.warn("{}: its scheduler failed to take the next poll ({}); no poll runs until a wake's succeeds", name,
            e.toString());
      }
      return null;
    }
    if (old != null) {
      old.task().cancel(false);
    }
    next = new Next(task, due);
    unscheduledBy = null;
    return null;
  }

  private void cancelLocked() {
    if (next != null) {
      next.task().cancel(false);
      next = null;
    }
  }

  /** A scheduled poll and when it runs. */
  private record Next(Future<?> task, Instant due) {}

  /**
   * Builds a {@link PollLoop}. Every method throws {@link NullPointerException} for a null
   * argument. Not thread-safe.
   */
  public static final class Builder {
    private final Class<?> owner;
    private final String threads;
    private final Runnable poll;
    private Clock clock = Clock.systemUTC();
    private Scheduler scheduler;
    private Duration interval = Duration.ofSeconds(1);
    private Duration maxInterval = Duration.ofMinutes(1);
    private BiConsumer<Error, String> onBroken;

    private Builder(Class<?> owner, String threads, Runnable poll) {
      this.owner = Objects.requireNonNull(owner, "owner");
      this.threads = Objects.requireNonNull(threads, "threads");
      this.poll = Objects.requireNonNull(poll, "poll");
    }

    /**
     * Sets the clock the loop reads poll times from.
     *
     * @param clock the time source for poll times; default {@link Clock#systemUTC()}
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Sets the scheduler that runs the polls.
     *
     * @param scheduler runs the polls; not shut down by the loop. Default: a daemon thread the loop
     *     owns and shuts down on {@link PollLoop#close()}
     * @return this builder
     */
    public Builder scheduler(Scheduler scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Sets the wait between polls while they make progress.
     *
     * @param interval the wait between polls while they make progress, positive; default 1 s
     * @return this builder
     */
    public Builder interval(Duration interval) {
      this.interval = Objects.requireNonNull(interval, "interval");
      return this;
    }

    /**
     * Sets the longest wait between polls while backed off.
     *
     * @param maxInterval the longest wait between polls while backed off; default 1 min
     * @return this builder
     */
    public Builder maxInterval(Duration maxInterval) {
      this.maxInterval = Objects.requireNonNull(maxInterval, "maxInterval");
      return this;
    }

    /**
     * Sets the handler that runs once the loop stopped for an Error (see {@link PollLoop#broken}).
     *
     * @param handler runs after the loop stopped for an Error (see {@link PollLoop#broken}), with
     *     the Error and where it happened, to say so and release the owner's work; it must not
     *     throw. Default: one ERROR line in the owner's log
     * @return this builder
     */
    public Builder onBroken(BiConsumer<Error, String> handler) {
      this.onBroken = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /**
     * {@return a new loop, not yet polling}
     *
     * @throws IllegalArgumentException if the interval is not positive, or the maximum is shorter
     */
    public PollLoop build() {
      if (interval.isZero() || interval.isNegative()) {
        throw new IllegalArgumentException("the poll interval must be positive: " + interval);
      }
      if (maxInterval.compareTo(interval) < 0) {
        throw new IllegalArgumentException("maxInterval " + maxInterval + " is shorter than interval " + interval);
      }
      return new PollLoop(this);
    }
  }
}
