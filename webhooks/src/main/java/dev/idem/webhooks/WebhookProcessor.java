package dev.idem.webhooks;

import dev.idem.core.Jitter;
import dev.idem.core.spi.RetryDecision;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.Scheduler;
import dev.idem.core.spi.poll.PollLoop;
import dev.idem.storage.StoredText;
import dev.idem.webhooks.internal.AttemptRow;
import dev.idem.webhooks.internal.ClaimedEvent;
import dev.idem.webhooks.internal.EventKey;
import dev.idem.webhooks.internal.InboxStore;
import dev.idem.webhooks.internal.LeaseHeartbeat;
import dev.idem.webhooks.internal.Listeners;
import dev.idem.webhooks.internal.RetryTimers;
import dev.idem.webhooks.internal.RunWatchdog;
import dev.idem.webhooks.internal.WorkerRuns;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Processes the inbox: claims due events under a lease, runs the handler registered for each
 * event's type, and records the outcome: DONE, a retry at a time the {@link RetryPolicy} chose
 * (backoff with jitter), or a dead letter.
 *
 * <pre>{@code
 * WebhookProcessor processor = WebhookProcessor.builder(inbox)
 *     .handler("payment_intent.succeeded", event -> fulfil(event))
 *     .build()
 *     .start();
 * }</pre>
 *
 * <p>Defaults: 4 workers; a lease of 5 minutes, renewed every third of it while the handler runs;
 * a poll every second (and at once when this process accepts an event or a worker frees up);
 * retries by {@link #DEFAULT_RETRY_POLICY} (1 s doubling to 10 min, full jitter, for 24 h from the
 * first attempt, at most 500 attempts); {@link HandlerFailureClassifier#defaults()}; an event
 * whose type has no handler, and no default handler, becomes a dead letter (re-drive it once a
 * handler exists). A run that the process did not survive counts as an attempt, and is a run
 * without an outcome, which the retry policy never sees: after 10 of them since the first attempt
 * (whatever the policy's attempts and deadline), the event is a dead letter instead of being run
 * again, so an event that kills the process each time ends as a dead letter after 10 crashes
 * instead of looping. A run on the workers is bounded by the {@linkplain Builder#maxRunTime
 * maximum run time} (default 15 minutes): a handler that hangs is interrupted then, and the run
 * counts as a failed attempt, retried or dead-lettered by the policy. close() interrupts a handler
 * too, and a run that had lasted the lease or longer when close() cut it short counts as a run
 * without an outcome, so a hang in every process life ends as a dead letter after 10 of them.
 *
 * <p>Several processors, in one process or many, may share a PostgreSQL inbox: claims use
 * {@code FOR UPDATE SKIP LOCKED}, and a lease is fenced by a generation, so an event runs in one
 * place at a time and a completion from a holder whose lease expired changes nothing. See
 * {@link WebhookHandler} for what handlers can rely on (at least once, no ordering).
 *
 * <p>All timing uses the injected {@link Clock}, {@link Scheduler} and randomness. The inbox
 * records wall-clock instants from the clock, but the waits do not rest on its progress alone: a
 * retry this processor schedules is also timed on the scheduler, and claimed once its delay has
 * passed there, up to its recorded due time, whatever the clock says; so a clock that never moves
 * ({@code Clock.fixed}, as apps give in test configuration) still sees its retries run, where
 * timed by the clock alone they never became due. Only this processor's own retries on its
 * workers: one scheduled elsewhere or before a restart, an expired lease, and the retries of
 * {@link #processDue} are due by the clock alone. The maximum run time is timed on the scheduler
 * too. Thread-safe.
 * A failing poll (the store is down) is logged once per outage and reported by
 * {@link #lastPollFailure()}; each failed poll doubles the wait before the next one, up to 30 s
 * (or the poll interval, if longer), and the first poll that works again logs one INFO and goes
 * back to the poll interval.
 */
public final class WebhookProcessor implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WebhookProcessor.class);
  private static final Duration MAX_POLL_BACKOFF = Duration.ofSeconds(30);
  /**
   * The longest owner: {@code lease_owner} and the attempt history's {@code owner} are VARCHAR(128)
   * (the migrations). PostgreSQL refuses a longer value, and with it every claim; SQLite would
   * take it, so the builder holds the limit on every dialect, and an inbox can move between them.
   */
  static final int MAX_OWNER_CHARS = 128;
  /**
   * The most runs of an event that may end without an outcome of their own (the process died
   * during them, they outlived their lease and their outcome was discarded as stale, or close() cut
   * them short after a long run) before it is a dead letter instead of
   * being run again: such runs never reach the retry policy, whose deadline thus never applies to
   * them, and whose 500 attempts would let an event that kills the process crash-loop the app 500
   * times. 10, what the default policy's attempts were before its deadline was made to bind.
   */
  static final int MAX_UNRECORDED_RUNS = 10;
  /** What {@link #run} returns for a run that did not leave its event PENDING. */
  private static final long NOT_PENDING = Long.MAX_VALUE;
  /** {@link #run}'s answer for a run close() cut short before its handler started: handed back unrun. */
  private static final long NOT_RUN = Long.MIN_VALUE;

  /**
   * The default retry policy for handlers: webhooks can wait longer than an HTTP call. 1 s doubling
   * to 10 min, full jitter, for 24 h from the first attempt: the deadline ends the retries, so an
   * outage of what a handler calls is outlived for up to a day (as the senders themselves retry
   * for days). The 500 attempts are only a backstop: retries of 5 min on average (full jitter of
   * the 10 min cap) fill the 24 h in about 300 of them. With 10 attempts, the delays summed to 511 s
   * at most, and an outage longer than about 8 minutes dead-lettered every event received during it.
   */
  public static final RetryPolicy DEFAULT_RETRY_POLICY = RetryPolicy.builder()
      .maxAttempts(500)
      .baseDelay(Duration.ofSeconds(1))
      .maxDelay(Duration.ofMinutes(10))
      .deadline(Duration.ofHours(24))
      .jitter(Jitter.FULL)
      .build();

  /**
   * The default {@linkplain Builder#maxRunTime maximum run time} of a handler, per attempt: 15
   * minutes, three default leases, so a handler slower than one lease (it is renewed) still
   * finishes, while one that hangs on a call without a timeout frees its event and its worker.
   */
  public static final Duration DEFAULT_MAX_RUN_TIME = Duration.ofMinutes(15);

  /**
   * How long {@link #close()} waits, after it interrupted the handlers still running past its
   * grace, for their runs to end and hand their events back. An interrupted run records its outcome
   * on its worker (back to PENDING, its attempt not counted: {@link #cutByClose}); what an app does
   * right after close() is close the inbox, and a run that had not written by then lost its
   * hand-back (the event stayed PROCESSING, and counted as a run the process died during). 5 s
   * covers the unwinding of a handler that answers the interrupt (a rollback, a finally block, a
   * connection closed) while keeping close() bounded; a handler that ignores the interrupt longer
   * than that is left behind (see {@link #close()}).
   */
  static final Duration CLOSE_HAND_BACK_WAIT = Duration.ofSeconds(5);

  private final WebhookInbox inbox;
  private final InboxStore store;
  private final Map<String, WebhookHandler> handlers;
  private final WebhookHandler defaultHandler;
  private final RetryPolicy policy;
  private final HandlerFailureClassifier classifier;
  private final Clock clock;
  private final DoubleSupplier random;
  private final String owner;
  private final Duration lease;
  private final int workerCount;
  private final WebhookListener listener;
  // The shared poll loop: the poll schedule, the backoff while the inbox cannot be read, the Error
  // that stopped processing, and the poller thread.
  private final PollLoop loop;
  /** Whether {@link #loop} runs on a scheduler it made (and shuts down), not one the app gave. */
  private final boolean ownsScheduler;
  private final Semaphore slots;
  private final Runnable nudge;
  private final LeaseHeartbeat heartbeat;
  private final RetryTimers retryTimers;
  private final Duration maxRunTime;
  private final RunWatchdog watchdog;
  private final Duration closeGrace;
  private final ThreadFactory workerThreads;
  /**
   * The threads running an event now, the workers' and those in processDue: close() waits for them
   * but never for its caller's own run (a handler's close()), and a run's failure is the shutdown's
   * only if close() interrupted that run ({@link #cutByClose}).
   */
  private final WorkerRuns runs = new WorkerRuns();

  private final Object lock = new Object();
  private ExecutorService workers;  // set by start
  private boolean started;
  private boolean closed;
  /**
   * Polls under way (guarded by lock): begun before close() was called, such a poll may still claim
   * events, which the pool, shut down by then, refuses, and which the poll hands back. close() waits
   * for it, so that the hand-back is written before the caller's next step (closing the inbox).
   */
  private int polls;
  /**
   * Whether the first close() saw the workers' pool terminate (guarded by lock). When it did not (a
   * handler's close(), which cannot wait for its own run; one whose caller was interrupted; one
   * that left runs behind), a later close() from outside the workers waits for the runs still going.
   */
  private boolean poolEnded;
  /**
   * Counted down when the first close() has finished: a later close() waits for it, since its
   * caller goes on to close the inbox, under the handlers the first one is still waiting for.
   */
  private final CountDownLatch closeDone = new CountDownLatch(1);

  private WebhookProcessor(Builder b) {
    this.inbox = b.inbox;
    this.store = b.inbox.store();
    this.handlers = Map.copyOf(b.handlers);
    this.defaultHandler = b.defaultHandler;
    this.policy = b.policy;
    this.classifier = b.classifier;
    this.clock = b.clock != null ? b.clock : b.inbox.clock();
    this.random = b.random;
    this.owner = b.owner;
    this.lease = b.lease;
    this.workerCount = b.workers;
    this.listener = b.listener;
    PollLoop.Builder polls = PollLoop.builder(WebhookProcessor.class, "idem-webhooks", this::poll).clock(clock)
        .interval(b.pollInterval).maxInterval(Collections.max(List.of(MAX_POLL_BACKOFF, b.pollInterval))).onBroken(this::stopped);
    if (b.scheduler != null) {
      polls.scheduler(b.scheduler);
    }
    this.loop = polls.build();
    this.ownsScheduler = b.scheduler == null;
    this.nudge = loop::wake;
    this.slots = new Semaphore(b.workers);
    this.heartbeat = new LeaseHeartbeat(store, clock, loop.scheduler(), lease, loop::broken);
    this.retryTimers = new RetryTimers(loop.scheduler(), nudge, loop::broken);
    this.maxRunTime = b.maxRunTime;
    this.watchdog = new RunWatchdog(loop.scheduler(), maxRunTime, loop::broken);
    this.closeGrace = b.closeGrace;
    this.workerThreads = b.workerThreads;
  }

  /**
   * {@return a builder}
   *
   * @param inbox the inbox to process
   * @throws IllegalArgumentException if the inbox was opened read-only
   */
  public static Builder builder(WebhookInbox inbox) {
    return new Builder(WebhookInbox.writable(inbox, "a WebhookProcessor"));
  }

  /**
   * Starts processing in the background: at once (events left from before a restart included),
   * then every poll interval and whenever this process accepts an event.
   *
   * @return this processor
   * @throws IllegalStateException if started twice or after close
   * @throws WebhookInboxException if processing already stopped for an Error (one recording an
   *     outcome in a {@link #processDue} call, or one of the processor's timers): a processor that
   *     stopped never polls
   */
  public WebhookProcessor start() {
    failIfBroken();
    synchronized (lock) {
      if (started || closed) {
        throw new IllegalStateException("start a processor once, before closing it");
      }
      started = true;
      workers = Executors.newFixedThreadPool(workerCount, workerThreads);
    }
    inbox.onNewWork(nudge);
    loop.start();
    return this;
  }

  /**
   * Runs the events due now (at most {@code max}) one by one on the calling thread, each claimed
   * just before it runs. For tests with a fake clock, and for apps that drive processing
   * themselves; it may run beside {@link #start()}ed processing (leases keep them apart). A retry
   * that one of its runs scheduled waits for the next call, and is due by the clock alone: under a
   * clock that never moves it never becomes due (advance a fake clock between calls). Its runs are
   * not bounded by a {@linkplain Builder#maxRunTime maximum run time} of their own: the thread is the
   * caller's. Called from a handler a worker runs, it is on that worker's run, whose maximum run time
   * interrupts whatever the thread runs then (the nested handler's failure counts as its attempt).
   * Once {@link #close()} was called (by one of its own handlers too: the kill switch), it claims
   * nothing more: the event running then finishes, and the call returns; an event it was claiming
   * as close() was called goes back to PENDING unrun, its attempt not counted, before close()
   * returns. A close() from another thread treats a run of this method as a worker's: it waits for
   * it within its grace, the lease renewed meanwhile, then (or at once, if the thread calling
   * close() is interrupted while it waits) interrupts the calling thread, but only while one of
   * its handlers runs, and waits up to 5 s more for the run to record its outcome; a later close()
   * waits for a run still going. A run whose handler had not started by then never starts it: its
   * event goes back to PENDING unrun, uncounted. A handler that returns normally though interrupted
   * succeeded, and the interrupt close() made is taken back (the call does not return it to the
   * app, but to an outer handler on the same thread, one whose own processDue call ran it, that
   * close() interrupted too); after one that throws, the call returns with the interrupt status the
   * handler left. A close() made by a handler this method runs (or by one it runs inside another
   * handler's call) never waits for that run, nor interrupts it or the handlers around it.
   *
   * @param max the most events to run, at least 1
   * @return how many events were run (0 after close)
   * @throws IllegalArgumentException if {@code max} is below 1; nothing is claimed
   * @throws WebhookInboxException if the inbox cannot be read or written, or if processing stopped
   *     for an Error (a background poll's, a timer's, an earlier call's), before this call or
   *     between two of its events: the Error is its cause
   */
  public int processDue(int max) {
    if (max < 1) {
      throw new IllegalArgumentException("max must be at least 1, not " + max);
    }
    failIfBroken();
    // One claim per run: a batch claimed at once under one lease left the later events waiting
    // their turn while their leases ran out, and another processor ran them meanwhile (then this
    // call ran them again, DONE or not). Only the events due when the call began, so that a retry
    // it schedules is not run again by it; those due again at that very instant (a zero delay on a
    // clock that stood still) are kept out by name.
    long dueBy = clock.millis();
    Set<EventKey> dueAgain = new HashSet<>();
    int ran = 0;
    while (ran < max) {
      failIfBroken();  // stopped meanwhile: by a poll, a timer, another processDue
      Set<EventKey> exclude = new HashSet<>(heartbeat.running());
      exclude.addAll(dueAgain);
      long now = clock.millis();
      // Listed as a run before the look at `closed`, which close() sets before it looks at the
      // runs: either this call sees close() and claims nothing, or close() sees this run and waits
      // for it (within its grace, its lease renewed, cut short after it) as for a worker's.
      if (!runs.enterDue()) {
        break;
      }
      try {
        if (closedNow()) {
          break;  // close(), a handler's too (the kill switch), stops this call's claims
        }
        List<ClaimedEvent> claimed = store.claim(1, owner, now, dueBy, now + lease.toMillis(), exclude);
        if (claimed.isEmpty()) {
          break;
        }
        ClaimedEvent e = claimed.get(0);
        if (closedNow()) {
          // Claimed as close() was called: back to PENDING unrun, uncounted, before close(), which
          // waits for this run, returns (as a poll's claim then is).
          notRun(e);
          break;
        }
        try {
          heartbeat.begin(e);
        } catch (RuntimeException | Error noBeat) {
          handBackUnrun(e, noBeat, "its lease heartbeat could not be scheduled");
          throw noBeat;
        }
        long dueAt = run(e, false);
        if (dueAt == NOT_RUN) {
          break;  // close() cut this run short before its handler started: handed back, not counted
        }
        if (dueAt <= dueBy) {
          dueAgain.add(EventKey.of(e));
        }
        ran++;
      } finally {
        runs.exit();
      }
    }
    return ran;
  }

  /** Whether close() was called: a processDue call claims nothing from then on. */
  private boolean closedNow() {
    synchronized (lock) {
      return closed;
    }
  }

  private void failIfBroken() {
    Error broken = loop.brokenBy().orElse(null);
    if (broken != null) {
      throw new WebhookInboxException("the webhook processor stopped after " + broken
          + "; the events stay in the inbox. Build a new processor", broken);
    }
  }

  /**
   * {@return the Error that stopped background processing, if one did (it stays, whatever a poll
   * still running at that moment does next); else the last failure of a background poll since
   * processing last worked, if any}
   */
  public Optional<Throwable> lastPollFailure() {
    return loop.lastFailure();
  }

  /** {@return the name written into leases and the attempt history} */
  public String owner() {
    return owner;
  }

  // ---------------------------------------------------------------------------------------------

  /** One poll, run by the loop: claims as many due events as there are free workers. */
  private void poll() {
    synchronized (lock) {
      if (closed) {
        return; // closing: the loop runs on through the grace only for the lease renewals
      }
      polls++;
    }
    try {
      claimAndDispatch();
    } finally {
      synchronized (lock) {
        polls--;
        lock.notifyAll();
      }
    }
  }

  private void claimAndDispatch() {
    int free = slots.availablePermits();
    if (free > 0) {
      long now = clock.millis();
      // First the retries whose wait this processor's scheduler timed to its end, up to the due
      // time recorded for each, whatever the clock says: one that stands still never reaches it.
      for (Map.Entry<EventKey, Long> r : retryTimers.elapsed(free)) {
        if (r.getValue() <= now) {
          // Due by the clock too (the usual case, a clock that moves): the claim below takes it,
          // in its turn, with no write of its own.
          retryTimers.claimed(r.getKey(), r.getValue());
          continue;
        }
        Optional<ClaimedEvent> claimed = store.claimRetry(r.getKey(), owner, now, Math.max(now, r.getValue()),
            now + lease.toMillis());
        retryTimers.claimed(r.getKey(), r.getValue());
        if (claimed.isPresent()) {
          dispatch(claimed.get());
          free--;
        }
      }
      if (free > 0) {
        List<ClaimedEvent> claimed = store.claim(free, owner, now, now, now + lease.toMillis(), heartbeat.running());
        for (int i = 0; i < claimed.size(); i++) {
          try {
            dispatch(claimed.get(i));
          } catch (RuntimeException | Error noWorker) {
            // The rest of the batch was claimed for workers this poll cannot hand it to now: back to
            // PENDING too, rather than left to lapse as runs without an outcome.
            for (ClaimedEvent rest : claimed.subList(i + 1, claimed.size())) {
              handBackUnrun(rest, noWorker, "the poll failed before it");
            }
            throw noWorker;
          }
        }
      }
    }
    loop.progressed();
  }

  /** Hands an event this poll claimed to a worker. */
  private void dispatch(ClaimedEvent e) {
    slots.acquireUninterruptibly();
    try {
      heartbeat.begin(e);
    } catch (RuntimeException | Error noBeat) {
      // The scheduler could not take its heartbeat (one that starts its threads on demand and
      // cannot start one: OutOfMemoryError): nothing would renew its lease, so it is not run; it
      // goes back as when no worker could start, and the failure is the poll's.
      slots.release();
      handBackUnrun(e, noBeat, "its lease heartbeat could not be scheduled");
      throw noBeat;
    }
    // Counted from here, not from when a worker begins it: close()'s shutdown of the pool lets a
    // run already handed over go on, so a handler's close() must wait for it too (WorkerRuns).
    runs.queued();
    try {
      workers.execute(() -> {
        if (!runs.enter()) {
          // Queued until close() had already cut the runs short: handed back, not begun, and
          // counted until then, so that a handler's close() returns after the write. An Error
          // there is the loop's, not the pool thread's to print to stderr.
          try {
            notRun(e);
          } catch (Error ex) {
            loop.broken(ex, "handing back webhook " + e.source() + "/" + e.eventId() + " at close");
          } finally {
            slots.release();
            runs.notRun();
          }
          return;
        }
        try {
          run(e, true);
        } finally {
          try {
            slots.release();
            loop.wake();
          } finally {
            runs.exit();
          }
        }
      });
    } catch (RejectedExecutionException closing) {
      slots.release();
      try {
        notRun(e);
      } finally {
        runs.notRun();
      }
    } catch (RuntimeException | Error noWorker) {
      // The pool could not start a worker for it (OutOfMemoryError: unable to create native thread,
      // or whatever its thread factory threw): no handler ran, so the event goes back as at close
      // (PENDING, due now, its attempt not counted; left to lapse, it would wait a lease and count
      // as a run without an outcome), and the slot and the queued run are given back, or close()
      // from a handler would wait out its grace for this run, and the processor run one worker
      // short for good. Thrown on, the failure is the poll's: an Error stops background processing,
      // another failure is a failed poll, retried after the backoff; both lastPollFailure() reports.
      slots.release();
      try {
        handBackUnrun(e, noWorker, "no worker could take it");
      } finally {
        runs.notRun();
      }
      throw noWorker;
    }
  }

  /**
   * Closing: an event claimed but never handed to a worker goes back to PENDING at once, instead of
   * waiting out its lease as PROCESSING.
   */
  private void notRun(ClaimedEvent e) {
    notRun(e, "not run, the processor closed; due again now", "at close");
  }

  /**
   * An event claimed but not run, the pool or the scheduler having failed with {@code noWorker}
   * ({@code why}: "no worker could take it", ...): back to PENDING at once, as at close. A failure
   * to write that is added to {@code noWorker} (the poll's failure, thrown on), the event then left
   * to its lease.
   */
  private void handBackUnrun(ClaimedEvent e, Throwable noWorker, String why) {
    try {
      notRun(e, "not run, " + why + " (" + noWorker + "); due again now", "after " + why);
    } catch (Error handBackFailed) {
      if (handBackFailed != noWorker) {  // the JVM may throw one preallocated OutOfMemoryError again
        noWorker.addSuppressed(handBackFailed);
      }
    }
  }

  /**
   * An event claimed but never handed to a worker goes back to PENDING, due now, its attempt not
   * counted (no handler ran), and is no longer listed as running here. A failure to write it is
   * logged: the event then runs again when its lease ends.
   */
  private void notRun(ClaimedEvent e, String decision, String when) {
    try {
      store.release(e, clock.millis(), decision);
    } catch (RuntimeException ex) {
      LOG.warn("could not hand webhook {}/{} back to the inbox {}; it runs again when its lease ends",
          e.source(), e.eventId(), when, ex);
    } finally {
      heartbeat.end(e);
    }
  }

  /**
   * Runs a claimed event and records the outcome; its lease is renewed until then.
   *
   * @param onWorker whether on one of this processor's workers (timed by the maximum run time)
   * @return when the event is due again, if this run left it PENDING; {@link #NOT_RUN} if close()
   *     cut it short before its handler started (handed back unrun); else {@link #NOT_PENDING}
   */
  private long run(ClaimedEvent e, boolean onWorker) {
    try {
      return runClaimed(e, onWorker);
    } catch (RuntimeException ex) {
      // The outcome could not be recorded (the store failed; runClaimed keeps what the app's own
      // callbacks throw from getting here): the lease expires and the event runs again, so nothing
      // is lost; say so.
      LOG.warn("could not record the outcome of webhook {}/{}; it runs again when its lease ends", e.source(),
          e.eventId(), ex);
    } catch (Error ex) {
      // A handler's own Error is the event's failure (runClaimed records it); this one came from
      // the store or a listener while the outcome was being recorded.
      loop.broken(ex, "webhook " + e.source() + "/" + e.eventId());
    } finally {
      heartbeat.end(e);
    }
    return NOT_PENDING;
  }

  /**
   * The loop stopped for an Error (OutOfMemoryError, StackOverflowError; from a listener only the
   * JVM's own) outside a handler, in a poll, an outcome's recording or a timer (a lease renewal,
   * the watchdog, a retry's timer): what it left behind is unknown, so background processing stops
   * instead of dying unseen on a pool thread. It is logged at ERROR, {@link #lastPollFailure()}
   * returns it, and {@link #processDue} throws, naming it. Unfinished events stay in the inbox for
   * the next processor.
   */
  private void stopped(Error error, String where) {
    LOG.error("webhook processing stopped: {} in {}; the events stay in the inbox for the next processor",
        error.toString(), where, error);
  }

  /** @return as {@link #run} */
  private long runClaimed(ClaimedEvent e, boolean onWorker) {
    if (!e.payloadIntact()) {
      // A changed byte on disk: what would reach the handler is not what the provider sent.
      return damaged(e);
    }
    if (e.attempts() > policy.maxAttempts()) {
      // Past the policy's attempts only after runs without an outcome of their own (the process
      // died during them; their lease lapsed and their outcome was discarded as stale): those
      // never reach the retry policy, whose attempts therefore do not stop them
      // (MAX_UNRECORDED_RUNS does, below). Only runs that recorded a failure count against it;
      // they stop at maxAttempts, so this finds as many only if the policy was lowered since.
      // (With maxAttempts 1, one crash during the only run made the event a dead letter without
      // running it again.)
      int failed = store.failedRuns(e);
      if (failed >= policy.maxAttempts()) {
        dead(e, lastRunUnrecorded(e), "attempts exhausted (" + failed + " of " + policy.maxAttempts() + ")");
        return NOT_PENDING;
      }
    }
    // Each unrecorded run was counted as an attempt, so fewer attempts than the bound need no look
    // at the history: the common retry costs no extra read.
    if (e.attempts() > MAX_UNRECORDED_RUNS) {
      int unrecorded = store.unrecordedRuns(e);
      if (unrecorded >= MAX_UNRECORDED_RUNS) {
        dead(e, lastRunUnrecorded(e), unrecorded + " runs ended without an outcome (the process died during them,"
            + " they outlived their lease, or close() cut them short after a long run); at most " + MAX_UNRECORDED_RUNS);
        return NOT_PENDING;
      }
    }
    WebhookHandler handler = handlers.getOrDefault(e.eventType(), defaultHandler);
    if (handler == null) {
      dead(e, "no handler is registered for type '" + e.eventType() + "'",
          "permanent: no handler; re-drive once one is registered");
      return NOT_PENDING;
    }
    WebhookEvent event = new WebhookEvent(e.source(), e.eventId(), e.eventType(), e.body(),
        Instant.ofEpochMilli(e.receivedAtMs()), e.attempts());
    long started = clock.millis();
    Throwable failure = null;
    // Only on this processor's own workers: processDue runs on the app's thread, not this
    // processor's to interrupt.
    RunWatchdog.Run limit = null;
    if (onWorker) {
      try {
        limit = watchdog.begin(Thread.currentThread(), () -> heartbeat.abandon(e));
      } catch (RuntimeException | Error noWatch) {
        // The scheduler could not take the watchdog's beat: a run it cannot bound is not begun.
        // Back to PENDING, its attempt not counted, as when its lease heartbeat could not be
        // scheduled; thrown on, an Error stops processing (run()).
        handBackUnrun(e, noWatch, "its maximum run time could not be timed");
        throw noWatch;
      }
    }
    if (limit != null) {
      // Known to the run: close() orders its cut against the watchdog's interrupt, and a handler's
      // own close() stops this timing, and holds the event's lease again if the limit had let it go:
      // close() may wait out a grace longer than the lease, and the handler runs on meanwhile.
      runs.timedBy(limit, () -> heartbeat.keep(e));
    }
    // Whether close() interrupted THIS run while its handler ran: a handler that called close()
    // itself, or had already returned or thrown when close() interrupted the others, is judged by
    // its own outcome, not by the shutdown going on beside it.
    boolean cut = false;
    if (!runs.handlerStarts()) {
      // close() cut the runs short before this handler started: it does not start after close()
      // returned (which waits for this hand-back, bounded), and the event goes back unrun.
      if (limit != null) {
        limit.end();
        if (limit.exceeded()) {
          Thread.interrupted();  // the watchdog's, meant for a handler that never started
        }
      }
      notRun(e);
      return NOT_RUN;
    }
    try {
      handler.handle(event);
    } catch (Throwable t) {
      failure = t;
      if (t instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
    } finally {
      cut = runs.handlerEnded(failure == null);
      if (limit != null) {
        limit.end();
      }
    }
    boolean overran = limit != null && limit.exceeded();
    if (overran && !cut) {
      // The interrupt was this processor's, for the handler only: recording the outcome on this
      // thread must not see it.
      Thread.interrupted();
    }
    long now = clock.millis();
    // Cut before overran: close() never cuts a run the watchdog has already interrupted
    // (WorkerRuns.cutShort), so a run that is both was cut first, and its maximum run time passed
    // while it unwound from close()'s interrupt: the failure is the shutdown's, handed back as
    // close() promises, not a counted attempt (on the last one, a dead letter).
    if (failure != null && cut) {
      return cutByClose(e, failure, started, now);
    }
    if (failure != null && overran) {
      return overran(e, failure, now);
    }
    if (failure == null) {
      if (store.markDone(e, now)) {
        Listeners.tell(listener, new WebhookActivity.Processed(e.source(), e.eventType(),
            Duration.ofMillis(Math.max(0, now - e.receivedAtMs())), e.attempts()));
      } else {
        stale(e);
      }
      return NOT_PENDING;
    }
    String error = describe(failure);
    // From here on, what the app's code (the classifier, the random source) throws is its own bug:
    // the run is still recorded with the handler's failure, the event judged by a safe fallback,
    // and nothing blames the store. Left to run(), the event stayed PROCESSING under its lease,
    // its attempt never ended, and later counted as a run the process died during.
    FailureKind kind;
    String classifierFailed = "";
    try {
      kind = classifier.classify(failure).orElse(FailureKind.RETRY);
    } catch (RuntimeException bug) {
      // Retried as a failure no classifier recognises is. The class only: the message may quote
      // the handler's failure, and that the event.
      LOG.warn("the webhook failure classifier threw {} judging {} from webhook {}/{}; the failure is retried as an"
          + " unclassified one", bug.getClass().getName(), failure.getClass().getName(), e.source(), e.eventId());
      kind = FailureKind.RETRY;
      classifierFailed = " (the classifier threw " + bug.getClass().getSimpleName() + ")";
    }
    if (kind == FailureKind.PERMANENT) {
      dead(e, error, "permanent failure");
      return NOT_PENDING;
    }
    RetryDecision d = decide(e, now);
    if (!d.retry()) {
      dead(e, error, d.reason() + classifierFailed);
      return NOT_PENDING;
    }
    if (store.scheduleRetry(e, now, now + d.delay().toMillis(), d.delay().toMillis(), error,
        d.reason() + ", next in " + d.delay() + classifierFailed)) {
      LOG.debug("webhook {}/{} failed (attempt {}), retry in {}: {}", e.source(), e.eventId(), e.attempts(),
          d.delay(), error);
      if (onWorker) {
        // Also timed on the scheduler: see RetryTimers. processDue's retries wait for a later call,
        // due by the clock, as documented there.
        retryTimers.schedule(EventKey.of(e), now + d.delay().toMillis(), d.delay());
      }
      Listeners.tell(listener, new WebhookActivity.RetryScheduled(e.source(), e.eventType(), d.delay()));
      return now + d.delay().toMillis();
    }
    stale(e);
    return NOT_PENDING;
  }

  /**
   * A run that lasted longer than the {@linkplain Builder#maxRunTime maximum run time}, was
   * interrupted, and ended with a failure: a failed attempt, retried or dead-lettered by the retry
   * policy like any other, whatever the classifier would say of the failure (most often what the
   * interrupt itself caused, not the event's fault).
   *
   * @return as {@link #run}
   */
  private long overran(ClaimedEvent e, Throwable failure, long now) {
    String error = "the handler ran longer than the maximum run time of " + maxRunTime + " and was interrupted ("
        + describe(failure) + ")";
    LOG.warn("webhook {}/{} of type '{}': its handler ran longer than the maximum run time of {} and was"
        + " interrupted; the run counts as a failed attempt ({})", e.source(), e.eventId(), e.eventType(), maxRunTime,
        failure.getClass().getName());
    RetryDecision d = decide(e, now);
    if (!d.retry()) {
      dead(e, error, d.reason());
      return NOT_PENDING;
    }
    if (store.scheduleRetry(e, now, now + d.delay().toMillis(), d.delay().toMillis(), error,
        d.reason() + ", next in " + d.delay())) {
      retryTimers.schedule(EventKey.of(e), now + d.delay().toMillis(), d.delay());
      Listeners.tell(listener, new WebhookActivity.RetryScheduled(e.source(), e.eventType(), d.delay()));
      return now + d.delay().toMillis();
    }
    stale(e);
    return NOT_PENDING;
  }

  /**
   * A run close() interrupted after its grace, and that ended with a failure. One shorter than the
   * lease is the shutdown's failure, not the event's: the event goes back to the inbox uncounted,
   * as close() promises, to run again after a restart (or on another processor) instead of
   * spending an attempt, or dead-lettering on its last. One that ran the lease or longer may be a
   * hung handler: handed back uncounted, it would hang a worker in every process life and never
   * end, so it goes back due at once but counted, its first attempt kept, and is one of the event's
   * unrecorded runs ({@link #MAX_UNRECORDED_RUNS}).
   *
   * @return as {@link #run}
   */
  private long cutByClose(ClaimedEvent e, Throwable failure, long started, long now) {
    Duration ran = Duration.ofMillis(Math.max(0, now - started));
    if (ran.compareTo(lease) < 0) {
      if (store.release(e, now, "interrupted by the processor's close (" + describe(failure) + "); due again now")) {
        LOG.info("webhook {}/{} was interrupted by close; it is due again, its attempt not counted", e.source(),
            e.eventId());
        return now;
      }
    } else if (store.releaseCounted(e, now, "interrupted by the processor's close after running " + ran
        + ", no shorter than the lease of " + lease + " (" + describe(failure) + "); counted as an attempt without"
        + " an outcome, due again now")) {
      LOG.warn("webhook {}/{} was interrupted by close after running {}; it is due again, the run counted as an"
          + " attempt without an outcome (after {} such runs it is a dead letter)", e.source(), e.eventId(), ran,
          MAX_UNRECORDED_RUNS);
      return now;
    }
    stale(e);
    return NOT_PENDING;
  }

  /**
   * Why an event's attempts ran out with no outcome recorded for its last one, from the attempt
   * history. That run either ended when its process died (an embedded inbox records so at its next
   * open), or has not ended: its process died, or it still runs after its lease lapsed (renewals
   * failed, the process paused). Not "the process died during N runs": most of the N may have
   * failed and been retried, and the last may not have been a death at all.
   */
  private String lastRunUnrecorded(ClaimedEvent e) {
    AttemptRow last = null;
    try {
      for (AttemptRow a : store.attempts(e.source(), e.eventId())) {
        if (a.run() == e.run() - 1) {
          last = a;
        }
      }
    } catch (RuntimeException unreadable) {
      LOG.warn("could not read the attempt history of webhook {}/{}", e.source(), e.eventId(), unreadable);
    }
    if (last == null) {
      return "no outcome was recorded for its last attempt";
    }
    String run = "its last attempt (run " + last.run() + " by " + last.owner() + ", started "
        + Instant.ofEpochMilli(last.startedAtMs()) + ")";
    if (last.endedAtMs() != null) {
      return run + " recorded no outcome: " + (last.decision() != null ? last.decision() : last.outcome());
    }
    return run + " never ended: its process died, or it still runs after its lease lapsed (the renewals failed or"
        + " the process paused)";
  }

  /**
   * The retry policy's decision on a retryable failure. The policy guards its own delay function;
   * what it cannot guard is the random source this processor hands it: one that throws, or gives a
   * value outside [0, 1), decides with the middle of the range instead.
   */
  private RetryDecision decide(ClaimedEvent e, long now) {
    Duration elapsed = Duration.ofMillis(Math.max(0, now - e.firstAttemptAtMs()));
    Duration previous = Duration.ofMillis(e.lastDelayMs());
    // The policy counts the runs that recorded a failure, this one included: not those the process
    // died during, nor those discarded as stale, which never reached it (counted, each crash took a
    // retry away). A first attempt has no history to read.
    int attempt = e.attempts() == 1 ? 1 : store.failedRuns(e) + 1;
    try {
      return policy.decide(attempt, elapsed, previous, Optional.empty(), random);
    } catch (RuntimeException bug) {
      LOG.warn("the webhook processor's random source failed ({}) deciding the retry of webhook {}/{}; 0.5 decides"
          + " it instead", bug.getClass().getName(), e.source(), e.eventId());
      return policy.decide(attempt, elapsed, previous, Optional.empty(), () -> 0.5);
    }
  }

  /**
   * The handler's failure as recorded: its class, and its message if it has one. The message is
   * the app's code too: one that throws leaves the class alone, with a word on why.
   */
  private static String describe(Throwable failure) {
    String name = failure.getClass().getName();
    String message;
    try {
      message = failure.getMessage();
    } catch (RuntimeException bug) {
      return name + " (its getMessage() threw " + bug.getClass().getName() + ")";
    }
    return message == null ? name : name + ": " + message;
  }

  private void dead(ClaimedEvent e, String error, String decision) {
    if (store.markDead(e, clock.millis(), error, decision)) {
      LOG.warn("webhook {}/{} of type '{}' is a dead letter after {} attempt(s): {} ({})", e.source(), e.eventId(),
          e.eventType(), e.attempts(), error, decision);
      Listeners.tell(listener, new WebhookActivity.DeadLettered(e.source(), e.eventType()));
    } else {
      stale(e);
    }
  }

  /**
   * A dead letter for the claimed copy's damage, unless a resend repaired the stored event since
   * the claim (it was answered duplicate, so it is not sent again): then it is due again now.
   *
   * @return as {@link #run}
   */
  private long damaged(ClaimedEvent e) {
    long now = clock.millis();
    String decision = "permanent: damaged payload, never handed to a handler; ask the provider to resend the event,"
        + " or restore the inbox from a backup";
    switch (store.markDamaged(e, now, InboxStore.DAMAGED, decision)) {
      case DEAD -> {
        LOG.warn("webhook {}/{} of type '{}' is a dead letter after {} attempt(s): {} ({})", e.source(), e.eventId(),
            e.eventType(), e.attempts(), InboxStore.DAMAGED, decision);
        Listeners.tell(listener, new WebhookActivity.DeadLettered(e.source(), e.eventType()));
        return NOT_PENDING;
      }
      case HANDED_BACK -> {
        LOG.info("webhook {}/{} was repaired by a resend while this run held it damaged; it is due again",
            e.source(), e.eventId());
        return now;
      }
      default -> {
        stale(e);
        return NOT_PENDING;
      }
    }
  }

  private void stale(ClaimedEvent e) {
    LOG.warn("the lease on webhook {}/{} ended before its run did (its renewals failed, or the process paused for"
        + " longer than the lease of {}); its outcome was not recorded, the current holder's counts", e.source(),
        e.eventId(), lease);
  }

  /**
   * Stops claiming (a poll, or a {@link #processDue} call on another thread, already under way when
   * it is called may still claim: what it claims then goes back to PENDING, not run, its attempt not
   * counted, before close() returns, within the bounds below), lets running handlers finish, those
   * of the workers and those {@link #processDue} calls run on the app's threads alike, but never the
   * caller's own run (up to the {@linkplain Builder#closeGrace grace},
   * default 10 s), then interrupts those still running, waits up to 5 s more for the interrupted
   * runs to end and record their outcome, and shuts down the threads it owns. Events not finished
   * stay in the inbox: one whose handler the interrupt ended goes back to PENDING, due at once, its
   * attempt not counted if the run was shorter than the lease (a longer one, perhaps a hung
   * handler, counts as an attempt without an outcome: see the class comment), even if its
   * {@linkplain Builder#maxRunTime maximum run time} passes while it unwinds from the interrupt.
   * Only the runs close() interrupted are judged so: a handler that had already returned or thrown
   * when close() interrupted the others is recorded by its own outcome, one the maximum run time had
   * already interrupted counts as a failed attempt (as that limit says) though close() interrupts
   * it again, and a claimed event whose handler had not started goes back to PENDING without
   * running. Only a thread whose handler is running is interrupted (not one claiming, handing an
   * event back, or recording an outcome or a dead letter); a handler that returns normally though
   * interrupted has succeeded, and the interrupt close() made is taken back before its outcome is
   * recorded. A
   * handler that ignores the interrupt for longer than those 5 s is left behind on its (daemon)
   * thread: close() returns without its outcome, its lease is renewed no longer, and the event runs
   * again when its lease ends, on another processor or after a restart (an embedded inbox: at its
   * next open, which records the run as one the process died during, counted as an attempt without
   * an outcome).
   *
   * <p>So close() returns within the grace plus 5 s. Idempotent and thread-safe. A later call, made
   * while the first is still closing or after it, waits for that one to finish, and, if the first
   * did not see every run end (it came from a handler, whose own run it cannot wait for; its
   * caller was interrupted; runs were left behind), for the runs still going as well, so that
   * whoever closes the inbox next does not close it under a run still recording its outcome; it too returns within the grace plus 5 s of its call, and does not interrupt
   * anything. A later call from a handler returns at once (the other close() waits for its run).
   * A caller interrupted while waiting stops waiting, cuts the runs short at once as the end of the
   * grace would (without waiting for their hand-back), and keeps its interrupt status (but for the
   * short wait, at most 5 s, for a lease renewal owed to a handler that closed the processor, see
   * below).
   *
   * <p>A handler may call close() (a kill switch, a handler that stops consuming), whether it runs
   * on a worker or in a {@link #processDue} call (one nested in another handler's too, whose run
   * close() does not wait for either): its own run cannot end while it waits, so close() then
   * waits for the other runs only, as above (and, if
   * another close() is already under way, returns at once: that one waits for this run). The other
   * runs include those a poll had handed to a worker that had not begun them yet (the shutdown of
   * the pool lets them go on): one that begins within the grace runs as any other, its lease renewed
   * and its maximum run time timed, and close() waits for its outcome; one that the cut after the
   * grace keeps from beginning hands its event back (due now, its attempt not counted) before
   * close() returns. It does
   * not interrupt the calling handler, whose event is recorded as usual when it returns: DONE if it
   * returns normally, and if it throws, its failure is the handler's own (retried or a dead letter
   * as any other), not one close() caused. From the call on, its run is no longer bounded by the
   * {@linkplain Builder#maxRunTime maximum run time} (whose interrupt would otherwise end close()'s
   * wait for the others; an interrupt the limit made before the call is set aside during close()'s
   * waits and set again when it returns), and once this close() has returned its lease is no longer
   * renewed, so it should return soon after. If the limit had already passed when the handler called
   * close() (it was interrupted, and its lease was no longer renewed, so that a hung handler frees
   * its event), its lease is renewed again from the call on (at once, by a task on the scheduler,
   * then at each of the heartbeat's beats), for as long as close() waits: a handler that closes the
   * processor is not hung, and with a grace longer than the lease another processor would otherwise
   * claim the event and run it beside this one, which goes on to record its own outcome: the event
   * processed twice.
   * close() does not return at once instead: as the first close() it still owes the other runs their
   * grace and their hand-back, and its wait is bounded (grace plus 5 s). A lease that another
   * processor took over before the call stays lost (that run counts, and this one's outcome is
   * not recorded).
   */
  @Override
  public void close() {
    // A handler's own close(): its run is no longer timed from here on. The watchdog's interrupt,
    // meant for the handler's attempt, would end the wait below as if the caller wanted close()
    // over at once, and cut the other runs short without their grace.
    long start = System.nanoTime();
    boolean fromHandler = runs.callerIsRunning();
    boolean limitPassed = fromHandler && runs.stopTimingCaller();
    ExecutorService w;
    boolean first;
    synchronized (lock) {
      first = !closed;
      closed = true;
      w = workers;
    }
    if (!first) {
      // A handler's close() during or after another one does not wait: the other waits for this
      // handler's run (or has finished, and a later close() from outside the workers waits for it),
      // which cannot end while its handler waits.
      if (!fromHandler) {
        awaitClosed(w); // outside the lock: the polls of the first close's grace take it
      }
      return;
    }
    // The limit passed before the handler called close(), and its interrupt may still be pending:
    // it is the handler's, not a wish to end close() at once. Set aside for the waits, given back.
    boolean watchdogInterrupt = limitPassed && Thread.interrupted();
    try {
      shutDown(w, fromHandler, start);
    } finally {
      closeDone.countDown();
      if (watchdogInterrupt) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * A later close() from outside the workers: waits, bounded as the first close itself is (the
   * grace plus 5 s, from this call), for the first to finish, and, if the first did not see the
   * pool end, for the runs still on the workers: a handler's close() returned while its own run went
   * on, an interrupted one returned without waiting for the runs it cut short to hand their events
   * back, and this caller's next step, closing the inbox, would lose those outcomes.
   */
  private void awaitClosed(ExecutorService w) {
    long start = System.nanoTime();
    long grace = saturatedNanos(closeGrace);
    long handBack = CLOSE_HAND_BACK_WAIT.toNanos();
    long bound = grace > Long.MAX_VALUE - handBack ? Long.MAX_VALUE : grace + handBack;
    try {
      if (!closeDone.await(bound, TimeUnit.NANOSECONDS)) {
        LOG.warn("the webhook processor's first close() had not finished {} plus {} after a later close() was called;"
            + " this one returns without it", closeGrace, CLOSE_HAND_BACK_WAIT);
        return;
      }
      boolean runsLeft;
      synchronized (lock) {
        runsLeft = !poolEnded;
      }
      // Differences of nanoTime readings stay right across the overflow of start + bound; a
      // negative remainder only asks whether the runs have ended. The pool, then the runs, those
      // of processDue calls too, which the pool's termination knows nothing of.
      if (runsLeft && ((w != null && !w.awaitTermination(bound - (System.nanoTime() - start), TimeUnit.NANOSECONDS))
          || !runs.awaitOthers(bound - (System.nanoTime() - start)))) {
        LOG.warn("webhook handlers still running {} plus {} after a later close() was called; they are left behind,"
            + " and their events run again when their leases end", closeGrace, CLOSE_HAND_BACK_WAIT);
      }
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
    }
  }

  /** @param start when close() was called ({@code System.nanoTime()}), from which its bound counts */
  private void shutDown(ExecutorService w, boolean fromHandler, long start) {
    try {
      inbox.removeOnNewWork(nudge);
      awaitWorkers(w, fromHandler);
    } finally {
      // After the grace, not before it, and never later: a handler that ignores the interrupt would
      // otherwise keep its event leased (on a scheduler the app gave, which loop.close() leaves
      // running) for as long as the JVM lives, and no other processor would ever run it. In a
      // finally: whatever went wrong while waiting, nothing of this processor stays scheduled.
      heartbeat.close();
      if (ownsScheduler) {
        // Before loop.close() shuts down the scheduler it owns, which drops what it has not run
        // yet (an app's scheduler runs it later); within close()'s bound (the grace plus 5 s), and
        // never more than those 5 s.
        long grace = saturatedNanos(closeGrace);
        long handBack = CLOSE_HAND_BACK_WAIT.toNanos();
        long bound = grace > Long.MAX_VALUE - handBack ? Long.MAX_VALUE : grace + handBack;
        long left = bound - (System.nanoTime() - start);
        heartbeat.awaitKeptRenewals(Duration.ofNanos(Math.max(0, Math.min(handBack, left))));
      }
      retryTimers.close();
      watchdog.close();
      loop.close();
    }
  }

  /**
   * A Duration in nanoseconds, saturated at {@link Long#MAX_VALUE} (about 292 years) instead of
   * overflowing: a grace of "however long it takes" ({@code ChronoUnit.FOREVER}) waits that long.
   */
  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }

  private void awaitWorkers(ExecutorService w, boolean fromHandler) {
    // The loop, and the scheduler it may own, keep running through the grace (a poll now claims
    // nothing: it sees `closed`), so that the leases of the events still running are renewed: a
    // grace longer than what was left of a lease let another processor run a handler that was
    // about to finish within it, beside it. The renewals end with the grace (shutDown). The runs
    // waited for are the workers' and those of processDue calls on the app's threads (never
    // started: the latter only), but never the caller's own (a handler's close(), on a worker or
    // in processDue: its run cannot end while it waits).
    if (w != null) {
      w.shutdown();
    }
    boolean ended = false;
    try {
      ended = awaitRuns(w, fromHandler, saturatedNanos(closeGrace));
      if (!ended) {
        LOG.warn("webhook handlers still running {} after close; they are interrupted, and their events run again"
            + " later", closeGrace);
        // Interrupted and marked one by one, each run whose handler still runs (not the caller's):
        // so each run's failure is judged by whether close() interrupted it. shutdownNow()
        // interrupted every worker, the caller and the runs recording their own outcome too, and
        // dropped the queued runs with their events still leased; a queued run now begins no more
        // and hands its event back (dispatch).
        runs.cutShort();
        // The interrupted runs hand their events back on their threads: wait for that, bounded,
        // since the caller's next step is usually to close the inbox they write to.
        ended = awaitRuns(w, fromHandler, CLOSE_HAND_BACK_WAIT.toNanos());
        if (!ended) {
          LOG.warn("webhook handlers still running {} after they were interrupted at close; they are left behind,"
              + " and their events run again when their leases end", CLOSE_HAND_BACK_WAIT);
        }
      }
    } catch (InterruptedException ex) {
      // The caller wants close() over now: no further wait (a later close() waits for the
      // hand-backs, since the runs were not seen to end).
      Thread.currentThread().interrupt();
      runs.cutShort();
    }
    // A handler's close() saw the other runs end, not its own: it goes on, and a later close()
    // from outside waits for it.
    if (ended && !fromHandler) {
      markPoolEnded();
    }
  }

  /**
   * Waits until no poll is under way (none begins any more: close() has set {@code closed}).
   *
   * @return whether none was within {@code nanos}
   */
  private boolean awaitPoll(long nanos) throws InterruptedException {
    // Differences of nanoTime readings stay right across the overflow of start + nanos.
    long start = System.nanoTime();
    synchronized (lock) {
      while (polls > 0) {
        long left = nanos - (System.nanoTime() - start);
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      return true;
    }
  }

  private void markPoolEnded() {
    synchronized (lock) {
      poolEnded = true;
    }
  }

  /**
   * Waits for a poll under way to end, then, from outside the workers, for the pool's termination,
   * then for the runs still going but the caller's own: for a handler's close(), those on the other
   * workers; for any, those of processDue calls, which the pool knows nothing of. The poll first:
   * what it claims from now on the pool refuses, and it hands that back; what it handed over before
   * is then counted by the pool and the runs.
   */
  private boolean awaitRuns(ExecutorService w, boolean fromHandler, long nanos) throws InterruptedException {
    // Differences of nanoTime readings stay right across the overflow of start + nanos.
    long start = System.nanoTime();
    if (!awaitPoll(nanos)) {
      return false;
    }
    if (!fromHandler && w != null && !w.awaitTermination(nanos - (System.nanoTime() - start), TimeUnit.NANOSECONDS)) {
      return false;
    }
    return runs.awaitOthers(nanos - (System.nanoTime() - start));
  }

  /** Configures a processor. Not thread-safe. */
  public static final class Builder {
    private final WebhookInbox inbox;
    private final Map<String, WebhookHandler> handlers = new HashMap<>();
    private WebhookHandler defaultHandler;
    private RetryPolicy policy = DEFAULT_RETRY_POLICY;
    private HandlerFailureClassifier classifier = HandlerFailureClassifier.defaults();
    private Clock clock;
    private DoubleSupplier random = () -> ThreadLocalRandom.current().nextDouble();
    private String owner = "webhooks-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
    private Duration lease = Duration.ofMinutes(5);
    private Duration pollInterval = Duration.ofSeconds(1);
    private int workers = 4;
    private WebhookListener listener = WebhookListener.none();
    private Scheduler scheduler;
    private Duration closeGrace = Duration.ofSeconds(10);
    private Duration maxRunTime = DEFAULT_MAX_RUN_TIME;
    private ThreadFactory workerThreads = PollLoop.daemonThreads("idem-webhooks-worker");

    private Builder(WebhookInbox inbox) {
      this.inbox = inbox;
    }

    /**
     * Registers the handler for one event type.
     *
     * @param eventType the type, exactly as the sender names it
     * @param handler runs for events of that type
     * @return this builder
     * @throws IllegalArgumentException if the type already has a handler
     */
    public Builder handler(String eventType, WebhookHandler handler) {
      Objects.requireNonNull(eventType, "eventType");
      Objects.requireNonNull(handler, "handler");
      if (handlers.putIfAbsent(eventType, handler) != null) {
        throw new IllegalArgumentException("type '" + eventType + "' already has a handler");
      }
      return this;
    }

    /**
     * Sets the handler for events whose type has no handler of its own.
     *
     * @param handler runs for events whose type has no handler; default none (they become dead letters)
     * @return this builder
     */
    public Builder defaultHandler(WebhookHandler handler) {
      this.defaultHandler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /**
     * Sets the retry policy (attempts, backoff, jitter and deadline) for failing handlers.
     *
     * @param policy attempts, backoff, jitter and deadline for failing handlers (Retry-After plays no
     *     part); default {@link #DEFAULT_RETRY_POLICY}
     * @return this builder
     */
    public Builder retryPolicy(RetryPolicy policy) {
      this.policy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * Sets the classifier that decides RETRY or PERMANENT for a handler's exception.
     *
     * @param classifier decides RETRY or PERMANENT for a handler's exception; default
     *     {@link HandlerFailureClassifier#defaults()}. One that throws leaves the failure retried,
     *     as an unclassified one is
     * @return this builder
     */
    public Builder classifier(HandlerFailureClassifier classifier) {
      this.classifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    /**
     * Sets the clock for leases and retry times. A clock that never moves ({@code Clock.fixed})
     * is fine for this processor's own retries, which are also timed on its scheduler (see the
     * class comment).
     *
     * @param clock for leases and retry times; default the inbox's clock
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Sets the source of uniform values in [0, 1) for jitter.
     *
     * @param random uniform values in [0, 1) for jitter, thread-safe; default {@link ThreadLocalRandom}.
     *     If it throws or gives a value outside [0, 1), that retry is timed as if it gave 0.5, with a
     *     warning
     * @return this builder
     */
    public Builder random(DoubleSupplier random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /**
     * Sets the owner name written into leases and the attempt history.
     *
     * @param owner the name in leases and attempt history, unique per process, at most 128
     *     characters (the inbox's columns); default {@code webhooks-<pid>-<random>}
     * @return this builder
     * @throws IllegalArgumentException if it is longer than 128 characters or holds a NUL (U+0000) or an
     *     unpaired surrogate
     */
    public Builder owner(String owner) {
      Objects.requireNonNull(owner, "the webhook processor's owner is null; give a name for its leases"
          + " (unique per process), or leave it unset for webhooks-<pid>-<random>");
      int chars = owner.codePointCount(0, owner.length());
      if (chars > MAX_OWNER_CHARS) {
        throw new IllegalArgumentException("the webhook processor's owner has " + chars + " characters; the inbox"
            + " holds at most " + MAX_OWNER_CHARS + " (lease_owner, and owner in the attempt history), and on"
            + " PostgreSQL every claim would fail. Give a shorter name, such as the pod name alone");
      }
      if (StoredText.hasUnstorable(owner)) {
        throw new IllegalArgumentException("the webhook processor's owner holds a NUL (U+0000), which PostgreSQL"
            + " refuses in its lease_owner column (every claim would fail), or an unpaired surrogate, which the"
            + " drivers store as '?' (the attempt history would name another owner). Give a name without either");
      }
      this.owner = owner;
      return this;
    }

    /**
     * Sets how long a claim lasts before another processor may take the event over.
     *
     * @param lease how long a claim lasts: renewed every third of it while the handler runs, so
     *     a run may take longer, while an event whose processor died runs again within one lease;
     *     default 5 minutes
     * @return this builder
     */
    public Builder lease(Duration lease) {
      this.lease = positive(lease, "lease");
      return this;
    }

    /**
     * Sets how often to look for due events (retries included).
     *
     * @param interval how often to look for due events (retries included); default 1 s
     * @return this builder
     */
    public Builder pollInterval(Duration interval) {
      this.pollInterval = positive(interval, "pollInterval");
      return this;
    }

    /**
     * Sets how many handlers may run at once.
     *
     * @param workers handlers that may run at once; default 4
     * @return this builder
     */
    public Builder workers(int workers) {
      if (workers < 1) {
        throw new IllegalArgumentException("workers must be positive: " + workers);
      }
      this.workers = workers;
      return this;
    }

    /**
     * Sets the listener that hears processed events, retries and dead letters.
     *
     * @param listener hears processed events, retries and dead letters; default none
     * @return this builder
     */
    public Builder listener(WebhookListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Sets the scheduler that runs the polls, the lease renewals and the other timers.
     *
     * @param scheduler runs the polls, the lease renewals, the waits of this processor's retries
     *     and the maximum run time; default a daemon thread this processor owns
     * @return this builder
     */
    public Builder scheduler(Scheduler scheduler) {
      this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Sets how long {@link WebhookProcessor#close()} waits for running handlers before it
     * interrupts them.
     *
     * @param grace how long {@link WebhookProcessor#close()} waits for running handlers before it
     *     interrupts them; zero interrupts at once; default 10 s; any length, one beyond about 292
     *     years ({@code Long.MAX_VALUE} nanoseconds, {@code ChronoUnit.FOREVER}) waits that long
     * @return this builder
     * @throws IllegalArgumentException if it is negative
     */
    public Builder closeGrace(Duration grace) {
      if (Objects.requireNonNull(grace, "the webhook processor's closeGrace is null; give a Duration, or leave it"
          + " unset for the default").isNegative()) {
        throw new IllegalArgumentException("closeGrace must not be negative: " + grace);
      }
      this.closeGrace = grace;
      return this;
    }

    /**
     * Sets the longest a handler may run, per attempt, on this processor's workers.
     *
     * <p>When a run lasts longer, the processor interrupts the handler's thread (at most a quarter
     * of the limit later: the limit is timed by a beat every quarter of it, on the
     * {@linkplain #scheduler scheduler}, not read from the clock) and stops renewing the event's
     * lease. A handler that then ends (the interrupt ended its wait, or it threw) has
     * made a failed attempt, retried or dead-lettered by the {@linkplain #retryPolicy retry policy}
     * like any other, whatever the {@linkplain #classifier classifier} would say of the failure; a
     * handler that returns normally despite the interrupt has succeeded. A handler that ignores the
     * interrupt keeps its worker until it returns, but no longer its event: the lease lapses within
     * one lease and another processor may run it (this one never runs it twice at once), unless it
     * calls {@link WebhookProcessor#close()}, which holds the lease again while it waits. Runs of
     * {@link WebhookProcessor#processDue} are on the caller's thread and are not bounded.
     *
     * @param maxRunTime the longest a handler may run per attempt, positive; default
     *     {@link #DEFAULT_MAX_RUN_TIME} (15 minutes: three default leases, so a handler slower than
     *     one lease still finishes)
     * @return this builder
     * @throws IllegalArgumentException if it is zero or negative
     */
    public Builder maxRunTime(Duration maxRunTime) {
      this.maxRunTime = positive(maxRunTime, "maxRunTime");
      return this;
    }

    /**
     * Sets the factory of the workers' threads. Package-private, for tests only: a test's factory
     * can hold a new worker before it takes its first task (a run handed to a worker but not yet
     * begun), which no callback of this processor's can, since none of its code runs there.
     *
     * @param threads makes the workers' threads; default daemon threads named
     *     {@code idem-webhooks-worker-N}
     * @return this builder
     */
    Builder workerThreads(ThreadFactory threads) {
      this.workerThreads = Objects.requireNonNull(threads, "threads");
      return this;
    }

    /** {@return the processor, not yet started} */
    public WebhookProcessor build() {
      return new WebhookProcessor(this);
    }

    private static Duration positive(Duration d, String what) {
      if (Objects.requireNonNull(d, () -> "the webhook processor's " + what + " is null; give a positive Duration,"
          + " or leave it unset for the default").isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be positive: " + d);
      }
      return d;
    }
  }
}
