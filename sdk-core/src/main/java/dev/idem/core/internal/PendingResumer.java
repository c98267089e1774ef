package dev.idem.core.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.JournalException;
import dev.idem.core.OperationException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.Transport;
import dev.idem.core.spi.Sleeper;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass of {@code IdempotentExecutor.resumePending}: hands the handlers the outcomes the journal
 * still owes them (queued operations that ended while no handler was told, such as in a crash
 * between the terminal write and the callback), then pages through the due operations, settles
 * the expired ones, re-sends the rest through their handler's transport, and tells the handler.
 * Each outcome a handler receives without throwing is recorded in the journal
 * ({@code Journal.recordOutcomeDelivered}), so that a restart does not hand it again.
 */
public final class PendingResumer {
  /** How one journaled operation is executed: the executor's single-flight synchronous path. */
  @FunctionalInterface
  public interface Runner {
    Outcome run(OperationRecord record, Transport transport) throws IdempotencyException;
  }

  private static final Logger LOG = LoggerFactory.getLogger(PendingResumer.class);
  private static final int PAGE = 100;

  private final EngineSettings settings;
  private final KeyRetention retention;
  private final Runner runner;
  /** How many operations of a page are resumed at once; 1 resumes them one after another. */
  private final int concurrency;
  /** Handlers are told one at a time, whichever thread resumed the operation. */
  private final Object notifyLock = new Object();

  /** What a pass counts for its summary. */
  private enum Tally { EXAMINED, SUCCEEDED, FAILED, UNCERTAIN, PENDING, EXPIRED, UNHANDLED }

  /** The pass's tallies, by ordinal: resumes of one page may run on several threads. */
  private final AtomicIntegerArray counts = new AtomicIntegerArray(Tally.values().length);
  /** Counted on the caller's thread, after the lanes ended. */
  private int leasedElsewhere;
  private Instant earliestForeignExpiry;

  public PendingResumer(EngineSettings settings, KeyRetention retention, Runner runner) {
    this(settings, retention, runner, 1);
  }

  /**
   * @param concurrency how many operations are resumed at once, on threads of this pass's own
   *     (stopped when the pass ends); 1 resumes them one after another on the caller's thread. With
   *     a durable journal, concurrent resumes share its group commits (after a crash each resumed
   *     operation's claim is a durable write, and one after another each paid a disk sync); on a
   *     shared database they overlap its round trips.
   */
  public PendingResumer(EngineSettings settings, KeyRetention retention, Runner runner, int concurrency) {
    if (concurrency < 1) {
      throw new IllegalArgumentException("concurrency must be at least 1: " + concurrency);
    }
    this.settings = settings;
    this.retention = retention;
    this.runner = runner;
    this.concurrency = concurrency;
  }

  /**
   * Runs passes until nothing is leased elsewhere or {@code waitFor} is spent, sleeping until the
   * earliest foreign lease expires in between; the summaries add up, except
   * {@code leasedElsewhere}, which is the last pass's.
   *
   * @param passes makes a fresh resumer per pass
   */
  public static ResumeSummary resumeWaiting(Map<String, ResumeHandler> handlers, Duration waitFor,
      EngineSettings settings, Sleeper sleeper, Supplier<PendingResumer> passes) throws IdempotencyException {
    Instant giveUpAt = settings.clock().instant().plus(waitFor);
    PendingResumer first = passes.get();
    ResumeSummary total = first.resume(handlers);
    Instant nextExpiry = first.earliestForeignExpiry;
    while (total.leasedElsewhere() > 0) {
      Instant now = settings.clock().instant();
      if (!now.isBefore(giveUpAt)) {
        return total;
      }
      Instant wake = nextExpiry == null || nextExpiry.isAfter(giveUpAt) ? giveUpAt : nextExpiry;
      // A lease is over strictly after its expiry instant.
      Duration nap = Duration.between(now, wake).plusMillis(1);
      LOG.info("{} operations are leased by another owner; waiting {} for the earliest lease to expire",
          total.leasedElsewhere(), nap);
      try {
        sleeper.sleep(nap);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IdempotencyException("interrupted while waiting for leases held elsewhere; "
            + total.leasedElsewhere() + " operations stay in the journal for the next resume", e);
      }
      PendingResumer next = passes.get();
      ResumeSummary more = next.resume(handlers);
      nextExpiry = next.earliestForeignExpiry;
      total = new ResumeSummary(total.examined() + more.examined(), total.succeeded() + more.succeeded(),
          total.failed() + more.failed(), total.uncertain() + more.uncertain(),
          total.stillPending() + more.stillPending(), total.expired() + more.expired(),
          total.unhandled() + more.unhandled(), more.leasedElsewhere());
    }
    return total;
  }

  /**
   * Runs the pass; single use. Pages through {@code Journal.findDue(now, owner, ...)}, the rule the
   * outbox dispatcher follows too: this owner's own leases first (an earlier incarnation's, taken
   * back at once), then the rest oldest due first. Up to {@code concurrency} operations are resumed
   * at once, and the next page is read as soon as fewer than {@code concurrency} of those read wait
   * for a lane: at most one page and {@code 2 × concurrency} records are held in memory.
   */
  public ResumeSummary resume(Map<String, ResumeHandler> handlers) throws IdempotencyException {
    handOverOwedOutcomes(handlers);
    Instant now = settings.clock().instant();  // one instant for the pass: the journal's order depends on it
    try (Lanes lanes = new Lanes(concurrency)) {
      OperationRecord after = null;
      while (true) {
        lanes.awaitRoom();
        List<OperationRecord> page = settings.journal().findDue(now, settings.owner(), after, PAGE);
        for (OperationRecord record : page) {
          count(Tally.EXAMINED);
          ResumeHandler handler = handlers.get(record.id().operation());
          if (handler == null) {
            count(Tally.UNHANDLED);
          } else {
            lanes.run(() -> resumeOne(record, handler));
          }
        }
        if (page.size() < PAGE) {
          break;
        }
        after = page.get(page.size() - 1);
      }
      lanes.awaitAll();
    }
    countLeasedElsewhere(handlers);
    return new ResumeSummary(tally(Tally.EXAMINED), tally(Tally.SUCCEEDED), tally(Tally.FAILED), tally(Tally.UNCERTAIN),
        tally(Tally.PENDING), tally(Tally.EXPIRED), tally(Tally.UNHANDLED), leasedElsewhere);
  }

  /** One operation's resume, which may fail only with the journal's failure. */
  @FunctionalInterface
  private interface ResumeTask {
    void run() throws JournalException;
  }

  /**
   * Runs resumes with at most {@code n} at once: on the caller's thread when {@code n} is 1, else on
   * {@code n} threads of the pass's own that take the next resume from a queue the caller fills a
   * page at a time. A lane that ends a resume takes the next at once, without a hand-over through
   * the caller (which, lane by lane, cost two thread wake-ups per operation); the caller reads the
   * next page when fewer than {@code n} resumes are left waiting. The first journal failure stops
   * the pass: no resume starts after it, and it is thrown once those running have ended, as a pass
   * one at a time would have thrown it.
   */
  private static final class Lanes implements AutoCloseable {
    private final int n;
    private final ReentrantLock lock = new ReentrantLock();
    /** Lanes wait on it for a resume to take. */
    private final Condition queued = lock.newCondition();
    /** The caller waits on it for room in the queue, or for every resume to end. */
    private final Condition progress = lock.newCondition();
    private final ArrayDeque<ResumeTask> queue = new ArrayDeque<>();
    private int running;
    private boolean closed;
    private Throwable failure;

    Lanes(int n) {
      this.n = n;
      for (int i = 0; n > 1 && i < n; i++) {
        Thread t = new Thread(this::work, "idem-resume");
        t.setDaemon(true);
        t.start();
      }
    }

    /** Hands a resume to the lanes (or runs it, with one lane); never waits for a lane. */
    void run(ResumeTask task) throws IdempotencyException {
      if (n == 1) {
        task.run();
        return;
      }
      lock.lock();
      try {
        if (failure == null) {
          queue.add(task);
          queued.signal();
        }
      } finally {
        lock.unlock();
      }
    }

    /** Waits until fewer than {@code n} resumes wait for a lane: time to read the next page. */
    void awaitRoom() throws IdempotencyException {
      awaitUntil(() -> queue.size() < n);
    }

    /** Waits until every resume handed over has ended, then throws the first failure, if any. */
    void awaitAll() throws IdempotencyException {
      awaitUntil(() -> queue.isEmpty() && running == 0);
    }

    private void awaitUntil(java.util.function.BooleanSupplier done) throws IdempotencyException {
      lock.lock();
      try {
        while (failure == null && !done.getAsBoolean()) {
          progress.await();
        }
        if (failure != null) {
          throw rethrow(failure); // close() lets those running end first
        }
      } catch (InterruptedException e) {
        queue.clear();
        Thread.currentThread().interrupt();
        throw new IdempotencyException("interrupted while resuming; every operation not yet resumed stays in the"
            + " journal for the next resume", e);
      } finally {
        lock.unlock();
      }
    }

    private void work() {
      while (true) {
        ResumeTask task;
        lock.lock();
        try {
          while (queue.isEmpty() && !closed) {
            queued.awaitUninterruptibly();
          }
          task = queue.poll();
          if (task == null) {
            return;
          }
          running++;
          if (queue.size() == n - 1) {
            progress.signal();
          }
        } finally {
          lock.unlock();
        }
        Throwable failed = null;
        try {
          task.run();
        } catch (Throwable t) {
          failed = t;
        }
        lock.lock();
        try {
          running--;
          if (failed != null && failure == null) {
            failure = failed;
            queue.clear();
          }
          if (failed != null || (running == 0 && queue.isEmpty())) {
            progress.signal();
          }
        } finally {
          lock.unlock();
        }
      }
    }

    private static IdempotencyException rethrow(Throwable t) {
      if (t instanceof IdempotencyException ie) {
        return ie;
      }
      if (t instanceof RuntimeException re) {
        throw re;
      }
      if (t instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(t);
    }

    /**
     * Starts no more resumes, waits for those still running (a pass that stops on a journal
     * failure still lets those finish, as one at a time would have), and lets the lanes end.
     */
    @Override
    public void close() {
      lock.lock();
      try {
        closed = true;
        queue.clear();
        queued.signalAll();
        while (running > 0) {
          progress.awaitUninterruptibly();
        }
      } finally {
        lock.unlock();
      }
    }
  }

  /**
   * Hands each handler the stored outcome of its queued operations that ended without a handler
   * being told (the process stopped between the terminal write and the callback, or the handler
   * threw). Nothing is sent: the outcome is the journal's, so {@link Outcome#fromJournal()} (and
   * {@code fromJournal()} of the failures) is true, which tells the handler that it may have seen
   * this operation before.
   */
  private void handOverOwedOutcomes(Map<String, ResumeHandler> handlers) throws IdempotencyException {
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = settings.journal().findUndelivered(after, PAGE);
      for (OperationRecord record : page) {
        ResumeHandler handler = handlers.get(record.id().operation());
        count(Tally.EXAMINED);
        if (handler == null) {
          count(Tally.UNHANDLED);
          continue;
        }
        Step step = AttemptLoop.settled(record);  // no event: the outcome is not new
        Outcome outcome = step instanceof Step.Done done ? done.outcome() : null;
        OperationException failure = outcome == null ? asOperationException(record, step.failure()) : null;
        if (notify(handler, outcome, failure)) {
          delivered(record.id());
        }
        switch (record.state()) {
          case SUCCEEDED -> count(Tally.SUCCEEDED);
          case FAILED -> count(Tally.FAILED);
          default -> count(Tally.UNCERTAIN);
        }
      }
      if (page.size() < PAGE) {
        return;
      }
      after = page.get(page.size() - 1).id();
    }
  }

  /** A settled failure as the handler receives it: a key refused as reused arrives as FAILED. */
  private static OperationException asOperationException(OperationRecord record, IdempotencyException failure) {
    if (failure instanceof OperationException oe) {
      return oe;
    }
    return new OperationFailedException(failure.getMessage(), failure, record.id(), record.attempts(),
        record.response(), true);
  }

  /**
   * Records that the handler received the outcome of {@code id}, so that no restart hands it again.
   * A journal that cannot be written stops the pass, as every other journal failure does; then the
   * outcome is handed once more by a later resume, read from the journal.
   */
  private void delivered(OperationId id) throws JournalException {
    try {
      settings.journal().recordOutcomeDelivered(id, settings.clock().instant());
    } catch (JournalException e) {
      throw e;
    } catch (IdempotencyException e) {
      LOG.warn("could not record that the outcome of {} was delivered; a later resume may hand it again: {}", id,
          e.toString());
    }
  }

  /**
   * Counts the operations IN_FLIGHT under another owner's live lease, which this pass does not
   * touch, and the earliest of those leases' expiries (for {@link #resumeWaiting}), so that a
   * startup resume never misses them silently. This owner's own leases were in the due pages.
   */
  private void countLeasedElsewhere(Map<String, ResumeHandler> handlers) throws IdempotencyException {
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = settings.journal().findByState(OperationState.IN_FLIGHT, after, PAGE);
      Instant now = settings.clock().instant();
      for (OperationRecord record : page) {
        if (!record.isLeasedAt(now) || settings.owner().equals(record.owner())) {
          continue;  // expired since the due pages were read, or this owner's: the next pass takes it
        }
        count(Tally.EXAMINED);
        if (!handlers.containsKey(record.id().operation())) {
          count(Tally.UNHANDLED);
          continue;
        }
        leasedElsewhere++;
        Instant expiry = record.leaseExpiresAt();
        if (earliestForeignExpiry == null || expiry.isBefore(earliestForeignExpiry)) {
          earliestForeignExpiry = expiry;
        }
      }
      if (page.size() < PAGE) {
        return;
      }
      after = page.get(page.size() - 1).id();
    }
  }

  private void resumeOne(OperationRecord record, ResumeHandler handler) throws JournalException {
    try {
      if (retention.isExpired(record)) {
        count(Tally.EXPIRED);
        OperationState ended = retention.expireIfDue(record);
        if (ended.isTerminal()) {
          OperationRecord now = settings.journal().find(record.id()).orElse(record);
          if (notify(handler, null, (OperationException) AttemptLoop.settled(now).failure())) {
            delivered(record.id());
          }
          count(ended == OperationState.FAILED ? Tally.FAILED : Tally.UNCERTAIN);
          return;
        }
      }
      Outcome outcome = runner.run(record, handler.transport());
      if (notify(handler, outcome, null)) {
        delivered(record.id());
      }
      count(Tally.SUCCEEDED);
    } catch (OperationException e) {
      boolean terminal = e.state().isTerminal();
      if (notify(handler, null, e) && terminal) {
        delivered(record.id());
      }
      switch (e.state()) {
        case FAILED -> count(Tally.FAILED);
        case UNCERTAIN -> count(Tally.UNCERTAIN);
        default -> count(Tally.PENDING);
      }
    } catch (IdempotencyKeyReusedException e) {
      if (notify(handler, null, new OperationFailedException(e.getMessage(), e, record.id(), record.attempts(), null))) {
        delivered(record.id());
      }
      count(Tally.FAILED);
    } catch (JournalException e) {
      throw e;
    } catch (IdempotencyException e) {
      LOG.warn("resuming {} failed: {}", record.id(), e.toString());
      count(Tally.PENDING);
    }
  }

  private void count(Tally what) {
    counts.incrementAndGet(what.ordinal());
  }

  private int tally(Tally what) {
    return counts.get(what.ordinal());
  }

  /** @return true if the handler returned normally: it received the outcome */
  private boolean notify(ResumeHandler handler, Outcome outcome, OperationException failure) {
    synchronized (notifyLock) {
      return notifyNow(handler, outcome, failure);
    }
  }

  private static boolean notifyNow(ResumeHandler handler, Outcome outcome, OperationException failure) {
    try {
      if (outcome != null) {
        handler.onSuccess(outcome);
      } else {
        handler.onFailure(failure);
      }
      return true;
    } catch (RuntimeException e) {
      LOG.error("a resume handler threw; the operation's state in the journal is unaffected, and the outcome of a"
          + " queued operation is handed to the handler again by the next resumePending", e);
      return false;
    }
  }
}
