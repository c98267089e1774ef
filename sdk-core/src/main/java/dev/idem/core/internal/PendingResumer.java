package dev.idem.core.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.JournalException;
import dev.idem.core.OperationException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationPendingException;
import dev.idem.core.Outcome;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transport;
import dev.idem.core.spi.Sleeper;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
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
 *
 * <p>The executor's close waits for a pass in progress (the app closes its journal next), with the
 * pass's own threads part of it ({@link ExecutorLifecycle#joinSyncCall}). So once the executor is
 * closed a pass stops before its next operation: what it claimed and no lane took is given back,
 * the outcomes handed over are recorded, and it throws {@link IllegalStateException} naming close,
 * rather than hold close for its grace and then write a closed journal. Close wakes its wait for
 * leases held elsewhere ({@link ExecutorLifecycle#backOff}).
 */
public final class PendingResumer {
  /** How one journaled operation is executed: the executor's single-flight synchronous path. */
  public interface Runner {
    /**
     * Runs {@code record} in its flight: leads it, claiming it first, or waits for its leader.
     *
     * @param atAgeLimit run if this execution (not a leader it waited for) ends the operation at
     *     its age limit, sending nothing, before its failure is thrown
     */
    Outcome run(OperationRecord record, Transport transport, Runnable atAgeLimit) throws IdempotencyException;

    /**
     * Leads the flight {@code ticket} (a leader's, joined by the caller), sending under
     * {@code claimed}, or claiming first if it is null; leaves the flight when it ends.
     *
     * @param fenced whether a first claim (with {@code claimed} null) takes the operation only if it
     *     is still as {@code record} ({@code Journal.claimIfUnchanged}): for one read just now and
     *     found due, not for one whose batch claim was given back (its generation moved)
     * @param atAgeLimit as for {@link #run}
     */
    Outcome lead(SingleFlight.Ticket ticket, OperationRecord record, Lease claimed, boolean fenced,
        Transport transport, Runnable atAgeLimit) throws IdempotencyException;

    /**
     * Ends {@code record} at its age limit ({@link KeyRetention#expireIfDue}) inside its flight,
     * waiting first for an execution of it running in this executor, whose live lease an expiry
     * outside the flight would take over; returns the record as the journal then holds it.
     *
     * @param atAgeLimit run if this call ended it: not if the execution it waited for ended it
     *     (which may have sent it, and had it refused)
     */
    OperationRecord expire(OperationRecord record, Runnable atAgeLimit) throws IdempotencyException;
  }

  /**
   * An operation a lane resumes: with no ticket, through {@link Runner#run}; with a ticket (the
   * leader's of its flight, joined before its batch was claimed), through {@link Runner#lead},
   * under {@code lease} if the batch claimed it.
   */
  private record Job(OperationRecord record, SingleFlight.Ticket ticket, Lease lease) {}

  private static final Logger LOG = LoggerFactory.getLogger(PendingResumer.class);
  private static final int PAGE = 100;

  private final EngineSettings settings;
  private final KeyRetention retention;
  private final Runner runner;
  private final SingleFlight flight;
  private final ExecutorLifecycle lifecycle;
  /** Set by the first lane that found the executor closed: the pass stopped before the rest. */
  private volatile boolean stoppedByClose;
  /** How many operations of a page are resumed at once; 1 resumes them one after another. */
  private final int concurrency;
  /** Handlers are told one at a time, whichever thread resumed the operation. */
  private final Object notifyLock = new Object();
  /** Guards {@link #toRecord}. */
  private final Object deliveredLock = new Object();
  /**
   * Outcomes handed over whose delivery is not recorded yet: fewer than {@code concurrency}, and
   * written before the lane that delivered takes its next operation.
   */
  private List<OperationId> toRecord = new ArrayList<>();

  /** What a pass counts for its summary. */
  private enum Tally { EXAMINED, SUCCEEDED, FAILED, UNCERTAIN, PENDING, EXPIRED, UNHANDLED }

  /** The pass's tallies, by ordinal: resumes of one page may run on several threads. */
  private final AtomicIntegerArray counts = new AtomicIntegerArray(Tally.values().length);
  /**
   * The operations the lanes examined and left unfinished, with the tally each got (PENDING or
   * UNHANDLED): another owner may claim one of them before the pass ends, and the closing count of
   * leases held elsewhere ({@link #countLeasedElsewhere}) must not examine it a second time. Only
   * these, since an operation the pass ended is not IN_FLIGHT at its end: a pass keeps no id of
   * what it resumed to an end, only of what it left, and of no more than {@link #REMEMBERED_LEFT}
   * of those: while its target is down a pass leaves its whole backlog, and the pages themselves
   * are let go as the pass goes, so the heap a pass takes must not grow with the journal for an
   * exact count. Past that many, one that another owner held or claimed while the pass ran may be
   * examined twice.
   */
  private final Map<OperationId, Tally> leftUnfinished = new ConcurrentHashMap<>();
  /** At most this many ids in {@link #leftUnfinished}: about 2 MB of heap. */
  static final int REMEMBERED_LEFT = 10_000;
  /** Counted on the caller's thread, after the lanes ended. */
  private int leasedElsewhere;
  private Instant earliestForeignExpiry;

  /**
   * @param concurrency how many operations are resumed at once, on threads of this pass's own
   *     (stopped when the pass ends); 1 resumes them one after another on the caller's thread. With
   *     a durable journal, concurrent resumes share its group commits (after a crash each resumed
   *     operation's claim is a durable write, and one after another each paid a disk sync); on a
   *     shared database they overlap its round trips. With several lanes the operations are claimed
   *     {@code concurrency} at a time, in one journal write ({@link Batches})
   * @param flight the executor's single flight, which every operation claimed in a batch joins
   *     before its claim, as the executor's own calls join it before theirs
   * @param lifecycle the executor's, which counts the pass as a synchronous call on the caller's
   *     thread ({@link ExecutorLifecycle#enterSync}); the pass stops once it is closed
   */
  public PendingResumer(EngineSettings settings, KeyRetention retention, SingleFlight flight,
      ExecutorLifecycle lifecycle, Runner runner, int concurrency) {
    if (concurrency < 1) {
      throw new IllegalArgumentException("concurrency must be at least 1: " + concurrency);
    }
    this.settings = settings;
    this.retention = retention;
    this.runner = runner;
    this.flight = flight;
    this.lifecycle = lifecycle;
    this.concurrency = concurrency;
  }

  /**
   * Runs passes until nothing is leased elsewhere or {@code waitFor} is spent, sleeping until the
   * earliest foreign lease expires in between; the summaries add up, except
   * {@code leasedElsewhere}, which is the last pass's. The sleep is the executor's to wake
   * ({@link ExecutorLifecycle#backOff}): close waits for this call, and a wait of minutes for a
   * dead process's leases would hold it for its whole grace.
   *
   * @param passes makes a fresh resumer per pass
   * @throws IllegalStateException if the executor was closed during a pass or the wait
   */
  public static ResumeSummary resumeWaiting(Map<String, ResumeHandler> handlers, Duration waitFor,
      EngineSettings settings, Sleeper sleeper, ExecutorLifecycle lifecycle, Supplier<PendingResumer> passes)
      throws IdempotencyException {
    // Capped: "wait however long it takes" is naturally FOREVER, which overflows an Instant.
    Instant giveUpAt = settings.clock().instant().plus(Checks.capped(waitFor));
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
      // The pass counted leases page by page, each against the clock of its page: the earliest one
      // may have expired before the pass ended. Then there is nothing to wait for (a sleeper refuses
      // a negative nap), and the next pass takes it; it cannot spin, since a lease counted again is
      // one that is live at that pass's clock.
      if (nap.isNegative() || nap.isZero()) {
        LOG.info("{} operations were leased by another owner; the earliest lease has expired meanwhile,"
            + " resuming again", total.leasedElsewhere());
      } else {
        LOG.info("{} operations are leased by another owner; waiting {} for the earliest lease to expire",
            total.leasedElsewhere(), nap);
        boolean waited;
        try {
          waited = lifecycle.backOff(sleeper, nap);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IdempotencyException("interrupted while waiting for leases held elsewhere; "
              + total.leasedElsewhere() + " operations stay in the journal for the next resume", e);
        }
        if (!waited) {
          throw closed("while it waited for " + total.leasedElsewhere() + " operations leased by another owner;"
              + " they stay in the journal as they are, with their keys");
        }
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
   * at once, each lane taking the next as soon as it is free; at most two pages are held in memory
   * (one with a single lane).
   *
   * @throws IllegalStateException if the executor was closed during the pass, which then stopped
   *     before its next operation (see the class comment)
   */
  public ResumeSummary resume(Map<String, ResumeHandler> handlers) throws IdempotencyException {
    Batches batches = null;
    try {
      handOverOwedOutcomes(handlers);
      if (!stoppedByClose) {
        Instant now = settings.clock().instant();  // one instant for the pass: the journal's order depends on it
        DuePages due = new DuePages(now, concurrency == 1 ? 0 : PAGE / 2);
        batches = concurrency == 1 ? null : new Batches(due, handlers);
        runLanes(due, batches, handlers);
        if (batches != null) {
          batches.giveBackUnsent();  // claimed, and no lane took them: the pass stopped (closed) first
        }
      }
    } catch (IdempotencyException | RuntimeException | Error e) {
      // The handlers received these outcomes before the failure: recorded if the journal still
      // can be written, so that the next resume does not hand them again. The claims no lane
      // took are given back, so that they stay known as never sent.
      // A give-back that fails in any way is added to the failure, not thrown in its place, and
      // does not keep the deliveries from being recorded.
      if (batches != null) {
        try {
          batches.giveBackUnsent();
        } catch (IdempotencyException | RuntimeException | Error suppressed) {
          if (suppressed != e) {  // one instance thrown twice (a preallocated Error): self-suppression throws
            e.addSuppressed(suppressed);
          }
        }
      }
      try {
        recordPendingDeliveries();
      } catch (IdempotencyException | RuntimeException suppressed) {
        if (suppressed != e) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
    recordPendingDeliveries();
    if (stoppedByClose) {
      throw closed("after " + tally(Tally.EXAMINED) + " operations were examined; those it did not resume stay in"
          + " the journal as they were, with their keys (a claim it made and did not use is given back)");
    }
    countLeasedElsewhere(handlers);
    return new ResumeSummary(tally(Tally.EXAMINED), tally(Tally.SUCCEEDED), tally(Tally.FAILED), tally(Tally.UNCERTAIN),
        tally(Tally.PENDING), tally(Tally.EXPIRED), tally(Tally.UNHANDLED), leasedElsewhere);
  }

  /**
   * The due operations, read a page at a time and handed out one at a time in the journal's order:
   * a lane that ends a resume takes the next itself, with no hand-over through another thread
   * (which cost two thread wake-ups per operation). With several lanes the next page is read ahead,
   * once half the current page is handed out, by a lane about to take its next operation
   * ({@link #readAheadIfDue}), outside this object's lock: the others go on taking the current
   * page's operations, and claiming them, meanwhile. (A page read waits for the journal's commit of
   * the claims before it, and read at the end of a page it held every lane idle for that time: 64
   * ms a page, a quarter of a loaded machine's resume; read by the lane claiming the next batch, it
   * held the claims.) At most two pages are held in memory. Thread-safe.
   */
  private final class DuePages {
    private final Instant now;
    /** How few operations may be left in the page when the next is read; 0: read it once empty. */
    private final int readAheadAt;
    private List<OperationRecord> page = List.of();
    private int next;
    /** The page after {@link #page}, once read; null if not read yet. */
    private List<OperationRecord> ahead;
    /** The last operation read so far: where the next page starts; null before the first page. */
    private OperationRecord lastRead;
    /** True while a lane reads a page, outside the lock. */
    private boolean reading;
    /** True once an empty page was read: nothing is due after the last one read. */
    private boolean allRead;
    private boolean stopped;

    DuePages(Instant now, int readAheadAt) {
      this.now = now;
      this.readAheadAt = readAheadAt;
    }

    /**
     * The next due operations, up to {@code max} of them, in order: from the current page and, once
     * it runs out, from the next (read here if no lane read it yet), so that a batch is cut short
     * only by the end of the due operations, not by a page's end (a batch of 4 at the end of each
     * page of 100 cost a whole claim, a commit and a disk sync, as a batch of 32 does). Empty when
     * there are none or the pass stopped.
     */
    List<OperationRecord> take(int max) throws IdempotencyException {
      List<OperationRecord> taken = null;
      while (true) {
        OperationRecord after;
        synchronized (this) {
          while (true) {
            if (stopped) {
              return List.of();
            }
            if (next == page.size() && ahead != null) {
              page = ahead;
              ahead = null;
              next = 0;
            }
            // Read here only when the page ran out; the read ahead is made by a lane about to take
            // its next operation (readAheadIfDue), not on the way to a batch's claim.
            if (!reading && !allRead && ahead == null && next == page.size()) {
              reading = true;
              after = lastRead;
              break;  // read the next page below, outside the lock
            }
            if (next < page.size()) {
              int from = next;
              int want = max - (taken == null ? 0 : taken.size());
              next = Math.min(page.size(), next + want);
              List<OperationRecord> part = page.subList(from, next);
              if (taken == null && part.size() == max) {
                return part;
              }
              if (taken == null) {
                taken = new ArrayList<>(max);
              }
              taken.addAll(part);
              if (taken.size() == max) {
                return taken;
              }
              continue;  // the page ran out: go on with the next
            }
            if (!reading) {
              return taken == null ? List.of() : taken;  // all read, all handed out
            }
            try {
              wait();  // for the lane reading the next page
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new IdempotencyException("interrupted while waiting for the next page of due operations; they"
                  + " stay in the journal for the next resume", e);
            }
          }
        }
        read(after);
      }
    }

    /**
     * Reads the next page now if it is due to be read ahead and no lane reads it: a lane about to
     * take its next operation does it, so that the lane claiming the next batch finds the page
     * read, instead of reading it between its claims, while the other lanes wait for the batch.
     */
    void readAheadIfDue() throws IdempotencyException {
      OperationRecord after;
      synchronized (this) {
        if (stopped || reading || allRead || ahead != null || page.size() - next > readAheadAt) {
          return;
        }
        reading = true;
        after = lastRead;
      }
      read(after);
    }

    /** Reads the page after {@code after} into {@link #ahead}; call with {@link #reading} set. */
    private void read(OperationRecord after) throws IdempotencyException {
      List<OperationRecord> read = null;
      try {
        read = settings.journal().findDue(now, settings.owner(), after, PAGE);
      } finally {
        synchronized (this) {
          reading = false;
          if (read == null) {
            stopped = true;  // the read failed: it is thrown below, and no lane takes more
          } else {
            int arrived = firstArrivedAfterThePass(read);
            ahead = arrived < 0 ? read : List.copyOf(read.subList(0, arrived));
            // A short page may have more after it (Journal's paged reads): only an empty one ends
            // the pass, or one that reached what became due after the pass began (below).
            allRead = read.isEmpty() || arrived >= 0;
            if (!ahead.isEmpty()) {
              lastRead = ahead.get(ahead.size() - 1);
            }
          }
          notifyAll();
        }
      }
    }

    /**
     * Where in {@code page} the operations that became due after this pass's instant begin (begun,
     * enqueued or re-driven since: a PENDING operation with no next attempt time is due from its
     * last change), or -1. Pages are in the order of when each became due (own leases first), so
     * all that follow it did too. The pass stops there: under steady traffic each page read found
     * what the app had begun while the last was resumed, and a pass that reads on to an empty page
     * never ended (its startup call never returned, close() waited out its grace); they are the
     * app's calls and its outbox's to send, not a resume's.
     */
    private int firstArrivedAfterThePass(List<OperationRecord> page) {
      for (int i = 0; i < page.size(); i++) {
        OperationRecord r = page.get(i);
        if (!DueRule.isOwnLease(r, settings.owner(), now) && DueRule.dueSince(r).isAfter(now)) {
          return i;
        }
      }
      return -1;
    }

    /** No operation is handed out after this: the rest stay in the journal for the next resume. */
    synchronized void stop() {
      stopped = true;
      notifyAll();
    }
  }

  /**
   * The operations of the due pages, claimed a batch at a time for the lanes: a lane that finds
   * few claimed operations left takes the next {@code concurrency} due, joins each one's
   * flight, and claims those it leads in one journal write ({@link Claims#claimAll}), outside this
   * object's lock, while the others go on taking what is claimed. On a durable journal that is one
   * disk sync per batch, where each operation's claim was a durable write of its own, waited for
   * by its lane (which then woke to send). An operation is in its flight from before its claim
   * until its lane ends it, as an executor's own call is, so no execution in this process claims
   * it meanwhile. Claimed operations no lane took when the pass stops are given back
   * ({@link #giveBackUnsent}); at most {@code concurrency} and a half are claimed and not yet taken.
   * Thread-safe.
   */
  private final class Batches {
    private final DuePages due;
    private final Map<String, ResumeHandler> handlers;
    private final ArrayDeque<Job> ready = new ArrayDeque<>();
    /** True while a lane claims a batch, outside the lock. */
    private boolean claiming;
    private boolean allTaken;
    private boolean stopped;

    Batches(DuePages due, Map<String, ResumeHandler> handlers) {
      this.due = due;
      this.handlers = handlers;
    }

    /** The next operation to resume, or null when there is none or the pass stopped. */
    Job next() throws IdempotencyException {
      synchronized (this) {
        while (true) {
          if (stopped) {
            return null;
          }
          if (!claiming && !allTaken && ready.size() <= concurrency / 2) {
            claiming = true;
            break;  // claim the next batch below, outside the lock
          }
          if (!ready.isEmpty()) {
            return ready.poll();
          }
          if (!claiming) {
            return null;
          }
          try {
            wait();  // for the lane claiming the next batch
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IdempotencyException("interrupted while waiting for the next batch of due operations; they"
                + " stay in the journal for the next resume", e);
          }
        }
      }
      List<Job> claimed = null;
      try {
        claimed = claimNext();
      } finally {
        synchronized (this) {
          claiming = false;
          if (claimed == null) {
            stopped = true;  // the claim failed: it is thrown below, and no lane takes more
          } else {
            allTaken = claimed.isEmpty();
            ready.addAll(claimed);  // given back at the pass's end if it stopped meanwhile
          }
          notifyAll();
        }
      }
      return next();
    }

    /**
     * Takes the next operations of the page and claims, in one journal write, those this pass
     * leads; the others (no handler, past their age limit, or running in this process already)
     * take the one-at-a-time path.
     */
    private List<Job> claimNext() throws IdempotencyException {
      List<OperationRecord> taken = due.take(concurrency);
      Job[] jobs = new Job[taken.size()];
      List<OperationRecord> toClaim = new ArrayList<>(taken.size());
      List<SingleFlight.Ticket> tickets = new ArrayList<>(taken.size());
      List<Integer> at = new ArrayList<>(taken.size());
      List<Optional<Lease>> leases = List.of();
      try {
        for (int i = 0; i < jobs.length; i++) {
          OperationRecord r = taken.get(i);
          // The app's map (and the clock the expiry reads) may throw for a later operation: the
          // flights joined for the earlier ones are left below, or their next call waits for them.
          SingleFlight.Ticket ticket = handlers.get(r.id().operation()) != null && !retention.isExpired(r)
              ? flight.join(r.id()) : null;
          if (ticket == null || !ticket.leader()) {
            jobs[i] = new Job(r, null, null);
          } else {
            toClaim.add(r);
            tickets.add(ticket);
            at.add(i);
          }
        }
        if (!toClaim.isEmpty()) {
          leases = Claims.claimAll(settings.journal(), toClaim, settings.owner(), settings.clock().instant(),
              settings.leaseFor());
        }
      } catch (IdempotencyException | RuntimeException | Error e) {
        for (int i = 0; i < tickets.size(); i++) {
          flight.leaveNotBegun(toClaim.get(i).id(), tickets.get(i));
        }
        throw e;
      }
      for (int i = 0; i < toClaim.size(); i++) {
        jobs[at.get(i)] = new Job(toClaim.get(i), tickets.get(i), leases.get(i).orElse(null));
      }
      return List.of(jobs);
    }

    /** No operation is handed out after this. */
    synchronized void stop() {
      stopped = true;
      due.stop();
      notifyAll();
    }

    /**
     * Gives back what was claimed and not taken by a lane: PENDING again, due now, never sent (a
     * crash before this leaves them claimed, which a restart treats as maybe sent). Call once the
     * lanes have ended. Every job is given back whatever the others' give-back threw (a journal's
     * RuntimeException or Error too, not only a JournalException): the first failure is thrown once
     * all were tried, the others added to it.
     */
    void giveBackUnsent() throws JournalException {
      List<Job> left;
      synchronized (this) {
        stopped = true;
        left = new ArrayList<>(ready);
        ready.clear();
      }
      Throwable failure = null;
      for (Job job : left) {
        try {
          notSent(job);
        } catch (JournalException | RuntimeException | Error e) {
          if (failure == null) {
            failure = e;
          } else if (e != failure) {
            // One instance thrown by two give-backs (a preallocated OutOfMemoryError, the JIT's
            // shared NullPointerException): self-suppression would throw here and stop the loop.
            failure.addSuppressed(e);
          }
        }
      }
      if (failure instanceof JournalException je) {
        throw je;
      }
      if (failure instanceof RuntimeException re) {
        throw re;
      }
      if (failure != null) {
        throw (Error) failure;
      }
    }
  }

  /**
   * Ends the flight of a claimed job that is not sent, giving its claim back first (after the
   * flight ended another execution could take the claim over, and would owe it an ambiguous
   * attempt). A claim that cannot be given back stays IN_FLIGHT under this owner: the next resume
   * takes it back at once, as a takeover.
   */
  private void notSent(Job job) throws JournalException {
    if (job.ticket() == null) {
      return;
    }
    try {
      if (job.lease() != null) {
        giveBack(job.record().id(), job.lease());
      }
    } finally {
      flight.leaveNotBegun(job.record().id(), job.ticket());
    }
  }

  /**
   * {@link #notSent} for a job whose lane is failing with {@code failure}, which is thrown on: a
   * failure to give the claim back is added to it (the flight is left either way).
   */
  private void notSentAfter(Job job, Throwable failure) {
    try {
      notSent(job);
    } catch (JournalException | RuntimeException | Error e) {
      if (e != failure) {  // the give-back threw the lane's own failure again: self-suppression throws
        failure.addSuppressed(e);
      }
    }
  }

  private void giveBack(OperationId id, Lease lease) throws JournalException {
    Claims.giveBack(settings.journal(), id, lease, settings.clock().instant(), "claimed by a resume, given back unsent");
  }

  /** One lane: resumes due operations until there are none, or the executor is closed. */
  private void lane(DuePages due, Batches batches, Map<String, ResumeHandler> handlers)
      throws IdempotencyException {
    while (true) {
      // The deliveries the lanes recorded since the last write, written before this lane takes its
      // next operation, whose attempt may wait a long time for an answer: held until every lane is
      // stuck in one, they were lost when the app ended then (SIGTERM's shutdown hook closes the
      // journal), and their outcomes handed over again after the restart.
      recordPendingDeliveries();
      if (stopIfClosed(due, batches)) {
        return;
      }
      Job job;
      if (batches != null) {
        due.readAheadIfDue();
        job = batches.next();
      } else {
        List<OperationRecord> one = due.take(1);
        job = one.isEmpty() ? null : new Job(one.get(0), null, null);
      }
      if (job == null) {
        return;
      }
      if (stopIfClosed(due, batches)) {
        notSent(job);  // closed while it was taken: its claim, if any, is given back unused
        return;
      }
      count(Tally.EXAMINED);
      ResumeHandler handler = handlers.get(job.record().id().operation());
      if (handler == null) {
        count(Tally.UNHANDLED);
        remember(job.record().id(), Tally.UNHANDLED);
        // Claimed only if the map held a handler when its batch was claimed (an app's map changed
        // since): left as it is, as without a handler, not IN_FLIGHT with its flight taken.
        notSent(job);
      } else {
        resumeOne(job, handler);
      }
    }
  }

  /**
   * Whether the executor is closed: then the pass stops here, before its next operation, and no
   * lane takes another; what was claimed and not taken is given back once the lanes ended.
   */
  private boolean stopIfClosed(DuePages due, Batches batches) {
    if (!lifecycle.isClosed()) {
      return false;
    }
    stoppedByClose = true;
    if (batches != null) {
      batches.stop();
    } else if (due != null) {
      due.stop();
    }
    return true;
  }

  private static IllegalStateException closed(String when) {
    return new IllegalStateException("this IdempotentExecutor was closed (close() was called) during resumePending, "
        + when + "; the next resumePending, on a new executor, resumes them");
  }

  /**
   * Runs the lanes: the caller's thread alone when {@code concurrency} is 1, else that many threads
   * of the pass's own, and waits for them. The first journal failure stops the pass: no resume
   * starts after it, and it is thrown once those running have ended, as a pass one at a time would
   * have thrown it; so does an interrupt of the caller. The lanes are part of the caller's call,
   * which close waits for ({@link ExecutorLifecycle#joinSyncCall}): a handler that closes the
   * executor on one of them does not wait for the pass it runs in.
   */
  private void runLanes(DuePages due, Batches batches, Map<String, ResumeHandler> handlers)
      throws IdempotencyException {
    if (batches == null) {
      lane(due, null, handlers);
      return;
    }
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> lanes = new ArrayList<>();
    for (int i = 0; i < concurrency; i++) {
      Thread t = new Thread(() -> {
        lifecycle.joinSyncCall();
        try {
          lane(due, batches, handlers);
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
          batches.stop();
        } finally {
          lifecycle.leaveSyncCall();
        }
      }, "idem-resume");
      t.setDaemon(true);
      t.start();
      lanes.add(t);
    }
    boolean interrupted = false;
    for (Thread t : lanes) {
      while (t.isAlive()) {
        try {
          t.join();
        } catch (InterruptedException e) {
          interrupted = true;
          batches.stop();
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
      throw new IdempotencyException("interrupted while resuming; every operation not yet resumed stays in the"
          + " journal for the next resume", null);
    }
    Throwable t = failure.get();
    if (t instanceof IdempotencyException ie) {
      throw ie;
    }
    if (t instanceof RuntimeException re) {
      throw re;
    }
    if (t instanceof Error err) {
      throw err;
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
      if (stopIfClosed(null, null)) {
        return;
      }
      List<OperationRecord> page = settings.journal().findUndelivered(after, PAGE);
      for (OperationRecord record : page) {
        if (stopIfClosed(null, null)) {
          return;
        }
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
      if (page.isEmpty()) {
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
   * Records that the handler received the outcome of {@code id}, so that no restart hands it again:
   * at once with one lane; with several, in one journal write with the others the lanes delivered
   * meanwhile ({@link #recordDelivered}), at the latest when a lane takes its next operation, which
   * spares each operation a turn on a durable journal's writer lock when lanes deliver together,
   * and never holds a delivery while the lanes wait for answers. Either way the write is deferred:
   * a crash before it hands the outcomes once more, read from the journal, as the journal's own
   * deferred commit could. A journal that cannot be written stops the pass, as every other journal
   * failure does.
   */
  private void delivered(OperationId id) throws JournalException {
    if (concurrency == 1) {
      recordDelivered(List.of(id));
      return;
    }
    List<OperationId> full = null;
    synchronized (deliveredLock) {
      toRecord.add(id);
      if (toRecord.size() >= concurrency) {
        full = toRecord;
        toRecord = new ArrayList<>();
      }
    }
    if (full != null) {
      recordDelivered(full);
    }
  }

  /** Records the deliveries not recorded yet (see {@link #delivered}). */
  private void recordPendingDeliveries() throws JournalException {
    List<OperationId> rest;
    synchronized (deliveredLock) {
      if (toRecord.isEmpty()) {
        return;
      }
      rest = toRecord;
      toRecord = new ArrayList<>();
    }
    if (!rest.isEmpty()) {
      recordDelivered(rest);
    }
  }

  private void recordDelivered(List<OperationId> ids) throws JournalException {
    try {
      if (ids.size() == 1) {
        settings.journal().recordOutcomeDelivered(ids.get(0), settings.clock().instant());
      } else {
        settings.journal().recordOutcomesDelivered(ids, settings.clock().instant());
      }
    } catch (JournalException e) {
      throw e;
    } catch (IdempotencyException e) {
      LOG.warn("could not record that the outcomes of {} were delivered; a later resume may hand them again: {}",
          ids, e.toString());
    }
  }

  /**
   * Counts the operations IN_FLIGHT under another owner's live lease, which this pass does not
   * touch, and the earliest of those leases' expiries (for {@link #resumeWaiting}), so that a
   * startup resume never misses them silently. This owner's own leases were in the due pages.
   *
   * <p>One the lanes examined already (due when its page was read, and claimed by another owner
   * before or after the lane's own claim) is not examined again: one left for want of a handler
   * stays counted as that, and one left PENDING is counted as leased elsewhere instead, since that
   * owner holds it now and a waiting resume waits for its lease as for any other.
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
        Tally examined = leftUnfinished.remove(record.id());
        if (examined == Tally.PENDING) {
          uncount(Tally.PENDING);
        } else if (examined == null) {
          count(Tally.EXAMINED);
        }
        if (handlers.get(record.id().operation()) == null) {
          if (examined == null) {
            count(Tally.UNHANDLED);
          }
          continue;
        }
        leasedElsewhere++;
        Instant expiry = record.leaseExpiresAt();
        if (earliestForeignExpiry == null || expiry.isBefore(earliestForeignExpiry)) {
          earliestForeignExpiry = expiry;
        }
      }
      if (page.isEmpty()) {
        return;
      }
      after = page.get(page.size() - 1).id();
    }
  }

  private void resumeOne(Job job, ResumeHandler handler) throws JournalException {
    OperationRecord record = job.record();
    // Set when this pass ends the operation at its age limit, unsent: before a send, or at the
    // claim before an attempt (a backoff that woke past the limit). Only then is it expired, as
    // ResumeSummary counts it: not when an execution it waited for ended it (sent and refused, or
    // SUCCEEDED), nor when it is still to be sent (held by another owner).
    AtomicBoolean atAgeLimit = new AtomicBoolean();
    Runnable endedAtAgeLimit = () -> atAgeLimit.set(true);
    // True while this lane leads the job's flight (under the batch's claim, if any) and nothing it
    // called left it yet: a failure then must leave it and give the claim back, or every later call
    // for the operation in this process waits for a flight no one leads.
    boolean leadsUnsent = job.ticket() != null;
    try {
      if (retention.endsAtAgeLimit(record)) {
        // Without a ticket: expired in its flight, never over a live execution here. With one, its
        // batch was claimed before the age limit, and the lane takes it now, perhaps long after (the
        // other lanes' sends were slow): checked again here, so that nothing is sent past the limit
        // with a key the server may have forgotten.
        OperationRecord now;
        if (job.ticket() == null) {
          now = runner.expire(record, endedAtAgeLimit);
        } else {
          leadsUnsent = false;  // expireTaken leaves the flight if it fails or ends the operation
          now = expireTaken(job, endedAtAgeLimit);
          leadsUnsent = !now.state().isTerminal();
        }
        if (now.state().isTerminal()) {
          if (atAgeLimit.get()) {
            count(Tally.EXPIRED);
          }
          tellSettled(handler, now);
          return;
        }
        record = now;  // not ended after all (re-driven since the page read it): sent as the journal holds it
      }
      if (job.lease() == null) {
        // Not claimed by a batch (one lane, or the batch's claim refused it: it changed since its
        // page was read). Another instance may have sent it since and journaled it PENDING until
        // its backoff or the server's Retry-After; a claim of it alone takes any PENDING operation,
        // so it would go out again at once: it is sent only if still due, and otherwise left to the
        // pass that finds it due.
        OperationRecord current;
        try {
          current = settings.journal().find(record.id()).orElse(null);
        } catch (IdempotencyException | RuntimeException | Error e) {
          if (job.ticket() != null) {
            flight.leaveNotBegun(record.id(), job.ticket());
          }
          throw e;
        }
        boolean changed = current == null || current.state() != record.state()
            || current.generation() != record.generation();
        // Unchanged, it is sent as the page decided: a wall clock stepped back since the page read
        // it must not leave it (a one-lane pass and a batch would then disagree).
        if (changed && (current == null || !DueRule.isDueFor(current, settings.owner(), settings.clock().instant()))) {
          if (job.ticket() != null) {
            flight.leaveNotBegun(record.id(), job.ticket());
          }
          leadsUnsent = false;
          if (current != null && current.state().isTerminal()) {
            tellSettled(handler, current);
          } else if (current != null) {
            // As a claim refused because another process holds it tells it: still PENDING.
            notify(handler, null, new OperationPendingException("not due: changed since it was read (another"
                + " process holds it, or queued it until " + current.nextAttemptAt() + ")", null, current.id(),
                current.attempts(), current.storedResponse().orElse(null)));
            leftPending(record.id());
          }
          return;
        }
        record = current;
      }
      // From here the job's flight is left by transportOf when there is no transport, by
      // usableLease if it fails, and by lead in every case.
      leadsUnsent = false;
      Transport transport = transportOf(handler, job);
      if (transport == null) {
        return;
      }
      Outcome outcome = job.ticket() == null ? runner.run(record, transport, endedAtAgeLimit)
          : runner.lead(job.ticket(), record, usableLease(job), job.lease() == null, transport, endedAtAgeLimit);
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
        default -> leftPending(record.id());
      }
      if (terminal && atAgeLimit.get()) {
        count(Tally.EXPIRED);
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
      leftPending(record.id());
    } catch (RuntimeException | Error e) {
      if (leadsUnsent) {
        notSentAfter(job, e);
      }
      throw e;
    }
  }

  /** Tells the handler the outcome of {@code ended}, journaled without a send of this pass, and counts it. */
  private void tellSettled(ResumeHandler handler, OperationRecord ended) throws JournalException {
    Step step = AttemptLoop.settled(ended);
    Outcome finished = step instanceof Step.Done done ? done.outcome() : null;
    if (notify(handler, finished, (OperationException) step.failure())) {
      delivered(ended.id());
    }
    count(switch (ended.state()) {
      case SUCCEEDED -> Tally.SUCCEEDED;
      case FAILED -> Tally.FAILED;
      default -> Tally.UNCERTAIN;
    });
  }

  /**
   * Ends a job that a lane takes past its age limit as the age limit ends it
   * ({@link KeyRetention#expireIfDue}), in the flight the job leads: under the batch's claim, which
   * that consumes, or, if the batch did not get one, under a claim of its own. Once ended, the
   * flight ends not begun, so that executions that joined it start over from the journal.
   *
   * @param atAgeLimit run if this call ends the operation at its age limit
   * @return the operation as the journal then holds it, read again whether it was ended or not.
   *     If it is finished (ended here, or by another owner that held it), the flight is left. If not
   *     (re-driven since it was read, or held by another owner), the job still leads its flight
   *     (under the batch's claim, if it had one) and is sent as this record: sent as the stale page
   *     record, a re-driven operation would take its age limit from its old creation, and its first
   *     retry would "fall past" a limit it no longer has
   */
  private OperationRecord expireTaken(Job job, Runnable atAgeLimit) throws IdempotencyException {
    OperationRecord record = job.record();
    OperationRecord now;
    try {
      OperationState state = job.lease() != null ? retention.expireClaimed(record, job.lease())
          : retention.expireIfDue(record);
      if (state.isTerminal()) {
        atAgeLimit.run();
      }
      now = settings.journal().find(record.id())
          .orElseThrow(() -> new IllegalStateException("operation vanished from the journal: " + record.id()));
    } catch (IdempotencyException | RuntimeException | Error e) {
      // Not sent: an unwritten end leaves the claim IN_FLIGHT under this owner, which the next
      // resume takes back at once; the flight's followers start over from the journal.
      flight.leaveNotBegun(record.id(), job.ticket());
      throw e;
    }
    if (now.state().isTerminal()) {
      flight.leaveNotBegun(record.id(), job.ticket());
    }
    return now;
  }

  /**
   * The handler's transport, or null after telling the handler why there is none: its
   * {@code transport()} threw (a credential not loaded yet, say) or returned null. Nothing is sent,
   * so the operation stays PENDING, its claim given back, and the pass goes on with the others. An
   * Error from {@code transport()} is thrown on, after the same hand-back (its flight left, its
   * claim given back): the pass ends with it, as a pass one at a time does.
   */
  private Transport transportOf(ResumeHandler handler, Job job) throws JournalException {
    Transport transport;
    RuntimeException thrown = null;
    try {
      transport = handler.transport();
    } catch (RuntimeException e) {
      transport = null;
      thrown = e;
    } catch (Throwable e) {
      // An Error (a class the app's handler loads, an assertion, or the JVM's own) ends the pass,
      // as with one lane, where nothing is claimed or joined before the transport is asked for.
      // Here the job was: nothing is sent, so its claim is given back and its flight left first.
      notSentAfter(job, e);
      throw e;
    }
    if (transport != null) {
      return transport;
    }
    OperationRecord record = job.record();
    notSent(job);
    String why = thrown == null ? "the resume handler's transport() returned null"
        : "the resume handler's transport() threw " + thrown.getClass().getSimpleName();
    LOG.warn("operation {} not resumed: {}; it stays PENDING with its key", record.id(), why, thrown);
    notify(handler, null, new OperationPendingException("operation " + record.id() + " was not sent: " + why
        + ". It stays PENDING with its key, and the next resume sends it", thrown, record.id(), record.attempts(),
        record.response()));
    leftPending(record.id());
    return null;
  }

  /**
   * The batch's claim of {@code job}, if enough of its lease is left to send under it; else null,
   * after giving it back, and the execution claims afresh. A lane takes a claim late when the
   * others were held by slow sends: an attempt must not start on a lease about to expire, which
   * another owner could take over while it is on the wire.
   */
  private Lease usableLease(Job job) throws JournalException {
    Lease lease = job.lease();
    if (lease == null) {
      return null;
    }
    boolean late;
    try {
      late = Duration.between(settings.clock().instant(), lease.expiresAt()).minus(settings.leaseFor().dividedBy(2))
          .isNegative();
    } catch (RuntimeException | Error e) {
      // The app's clock failed between the claim and the send: nothing is sent, so the claim is
      // given back (if the clock answers now) and the flight left, as for any such failure.
      notSentAfter(job, e);
      throw e;
    }
    if (!late) {
      return lease;
    }
    try {
      giveBack(job.record().id(), lease);
    } catch (JournalException | RuntimeException | Error e) {
      flight.leaveNotBegun(job.record().id(), job.ticket());
      throw e;
    }
    return null;
  }

  private void count(Tally what) {
    counts.incrementAndGet(what.ordinal());
  }

  /** Takes back a count made for an operation now counted under another tally. */
  private void uncount(Tally what) {
    counts.decrementAndGet(what.ordinal());
  }

  /** Counts {@code id} as left PENDING by its lane, and remembers it for {@link #countLeasedElsewhere}. */
  private void leftPending(OperationId id) {
    count(Tally.PENDING);
    remember(id, Tally.PENDING);
  }

  /** Remembers {@code id} as left with {@code tally}, while fewer than {@link #REMEMBERED_LEFT} are. */
  private void remember(OperationId id, Tally tally) {
    if (leftUnfinished.size() < REMEMBERED_LEFT) {
      leftUnfinished.put(id, tally);
    }
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
