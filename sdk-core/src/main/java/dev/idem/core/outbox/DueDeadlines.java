package dev.idem.core.outbox;

import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Scheduler;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Due times kept in this process, on the scheduler, beside those the journal keeps on the wall
 * clock, so that a wall clock that steps back (an NTP correction) does not hold a queued operation
 * for the length of the step.
 *
 * <p>Why: a PENDING operation's next attempt time is journaled as a wall-clock instant, and
 * {@code Journal.findDue} compares it with the wall clock. When that clock steps back an hour, an
 * operation queued before the step is due an hour later than the backoff that was chosen for it.
 * The scheduler waits by delay (a {@code ScheduledExecutorService} runs on {@link System#nanoTime},
 * which never steps), so a wait kept there ends when the backoff does.
 *
 * <ul>
 *   <li>{@link #arm}: a delivery of this dispatcher ended PENDING. The wait until the due time it
 *       journaled, read now, is kept on the scheduler, at most {@link #longest} (the longest wait
 *       any due time may be written with, {@code AttemptLoop.longestWait}). When it has passed the
 *       operation is due here, whatever the wall clock says.</li>
 *   <li>{@link #scanIfStepped}: at the first poll (after a restart only the journal's times exist)
 *       and whenever the wall clock is found behind where an earlier poll read it, the PENDING
 *       operations of registered names are read once, and each whose due time lies further ahead
 *       of the clock than {@link #longest} (written by a clock that was ahead: this one before its
 *       step, or another host's) is due here once {@link #longest} has passed on the scheduler.</li>
 * </ul>
 * A due time within {@link #longest} of the clock is left to the journal: an operation written
 * after the step waits its backoff as before. An operation due here is delivered only while the
 * journal still holds it PENDING with the due time it had when its wait began: one another
 * instance or an inline call delivered meanwhile (and perhaps queued again with a new due time of
 * its own) is dropped, never sent ahead of its new backoff.
 *
 * <p>Bounded: at most {@link #MAX_KEPT} operations are kept at once; beyond that, an operation is
 * left to its journaled due time (a scan that stopped there scans again once its wait has passed).
 * Thread-safe: one monitor, never held while the journal is read or a task scheduled.
 */
final class DueDeadlines {
  private static final Logger LOG = LoggerFactory.getLogger(OutboxDispatcher.class);
  /** The most operations kept at once, waiting or due: a few hundred bytes each. */
  static final int MAX_KEPT = 10_000;

  private final Journal journal;
  private final Clock clock;
  private final Scheduler scheduler;
  private final Duration longest;
  private final Predicate<String> registered;
  private final int pageSize;

  // Guarded by this. waiting: operations whose wait is on the scheduler, each with the wait it is
  // part of (a token, so that a timer replaced by a later arm fires for nothing) and the due time
  // the journal held when it began. due: those whose wait has passed, in the order they became due.
  private final Map<OperationId, Waiting> waiting = new HashMap<>();
  private final Map<OperationId, Instant> due = new LinkedHashMap<>();
  private final Map<Token, Future<?>> timers = new HashMap<>();
  private Instant lastSeen;
  private boolean scanNeeded = true;
  private boolean closed;

  private record Waiting(Token token, Instant journaledDue) {}

  /** One scheduler task's wait; {@code fired} guarded by the enclosing instance. */
  private static final class Token {
    boolean fired;
  }

  /**
   * @param longest the longest wait a due time may be written with; positive
   * @param registered whether an operation name is delivered by this dispatcher
   */
  DueDeadlines(Journal journal, Clock clock, Scheduler scheduler, Duration longest, Predicate<String> registered,
      int pageSize) {
    this.journal = journal;
    this.clock = clock;
    this.scheduler = scheduler;
    this.longest = longest;
    this.registered = registered;
    this.pageSize = pageSize;
  }

  /**
   * A delivery of {@code record}'s operation ended with it PENDING, due at
   * {@code record.nextAttemptAt()}: it is due here once the wait from now until then (at most
   * {@link #longest}) has passed on the scheduler.
   */
  void arm(OperationRecord record) {
    if (record.state() != OperationState.PENDING) {
      return;
    }
    Instant journaledDue = record.nextAttemptAt();
    Duration wait = journaledDue == null ? Duration.ZERO : Duration.between(clock.instant(), journaledDue);
    if (wait.isNegative()) {
      wait = Duration.ZERO;
    } else if (wait.compareTo(longest) > 0) {
      wait = longest;  // written on a clock that stepped back since
    }
    start(Map.of(record.id(), journaledDue == null ? Instant.MIN : journaledDue), wait, false);
  }

  /**
   * At the first call, and whenever {@code now} is behind the instant the last call was given (the
   * wall clock stepped back): reads the PENDING operations of registered names, and keeps a wait
   * of {@link #longest} for each due further ahead of {@code now} than that. A journal that cannot
   * be read is scanned again at the next call.
   */
  void scanIfStepped(Instant now) {
    synchronized (this) {
      if (lastSeen != null && now.isBefore(lastSeen)) {
        scanNeeded = true;
      }
      lastSeen = now;
      if (!scanNeeded || closed) {
        return;
      }
      scanNeeded = false;
    }
    Map<OperationId, Instant> ahead = new LinkedHashMap<>();
    boolean full = false;
    try {
      int room = room();
      OperationId after = null;
      scan:
      while (true) {
        List<OperationRecord> page = journal.findByState(OperationState.PENDING, after, pageSize);
        for (OperationRecord r : page) {
          Instant at = r.nextAttemptAt();
          if (registered.test(r.id().operation()) && at != null && Duration.between(now, at).compareTo(longest) > 0
              && !isKept(r.id())) {
            if (ahead.size() >= room) {
              full = true;
              break scan;
            }
            ahead.put(r.id(), at);
          }
        }
        if (page.size() < pageSize) {
          break;
        }
        after = page.get(page.size() - 1).id();
      }
    } catch (IdempotencyException | RuntimeException e) {
      LOG.debug("could not look for due times written on a clock ahead of this one: {}", e.toString());
      synchronized (this) {
        scanNeeded = true;
      }
    }
    if (!ahead.isEmpty()) {
      LOG.info("{} queued operation(s) are due more than {} ahead of the clock, which the longest backoff never"
          + " asks for: their due times were written on a clock that was ahead (this one before it stepped back, or"
          + " another host's); they are due in {} instead", ahead.size(), longest, longest);
      start(ahead, longest, full);
    } else if (full) {
      synchronized (this) {
        scanNeeded = true;  // no room at all now: look again at the next poll
      }
    }
  }

  /**
   * Up to {@code max} operations due here, oldest first, without taking them: each stays until
   * {@link #started} or {@link #drop}.
   */
  synchronized List<Map.Entry<OperationId, Instant>> due(int max) {
    List<Map.Entry<OperationId, Instant>> out = new ArrayList<>(Math.min(max, due.size()));
    for (Map.Entry<OperationId, Instant> e : due.entrySet()) {
      if (out.size() >= max) {
        break;
      }
      out.add(Map.entry(e.getKey(), e.getValue()));
    }
    return out;
  }

  /**
   * Whether {@code record}, due here since the journal held it due at {@code journaledDue}, is
   * still the operation that wait was for: PENDING with that same due time. If not, it is dropped.
   */
  boolean stillDue(OperationRecord record, Instant journaledDue) {
    Instant at = record.nextAttemptAt() == null ? Instant.MIN : record.nextAttemptAt();
    if (record.state() == OperationState.PENDING && at.equals(journaledDue)) {
      return true;
    }
    drop(record.id());
    return false;
  }

  /** A delivery of {@code id} starts: its wait, if any, is over. */
  void started(OperationId id) {
    drop(id);
  }

  /** Forgets {@code id}: the journal no longer holds it PENDING with the due time its wait began at. */
  synchronized void drop(OperationId id) {
    waiting.remove(id);
    due.remove(id);
  }

  /** The dispatcher stopped: cancels the waits, and keeps nothing more. */
  void close() {
    List<Future<?>> cancel;
    synchronized (this) {
      closed = true;
      cancel = new ArrayList<>(timers.values());
      timers.clear();
      waiting.clear();
      due.clear();
    }
    for (Future<?> f : cancel) {
      f.cancel(false);
    }
  }

  private synchronized int room() {
    return MAX_KEPT - waiting.size() - due.size();
  }

  private synchronized boolean isKept(OperationId id) {
    return waiting.containsKey(id) || due.containsKey(id);
  }

  /** Keeps a wait of {@code wait} for each of {@code ids}, as one scheduler task. */
  private void start(Map<OperationId, Instant> ids, Duration wait, boolean scanAfter) {
    Token token = new Token();
    synchronized (this) {
      if (closed) {
        return;
      }
      for (Map.Entry<OperationId, Instant> e : ids.entrySet()) {
        // An operation already kept is replaced (its earlier wait fires for nothing); a new one
        // only while there is room.
        if (waiting.containsKey(e.getKey()) || due.containsKey(e.getKey()) || waiting.size() + due.size() < MAX_KEPT) {
          due.remove(e.getKey());
          waiting.put(e.getKey(), new Waiting(token, e.getValue()));
        }
      }
    }
    Future<?> timer;
    try {
      timer = scheduler.schedule(() -> fire(ids.keySet(), token, scanAfter), wait);
    } catch (RejectedExecutionException e) {
      // A scheduler shut down under the dispatcher: the journal's due times still hold.
      synchronized (this) {
        waiting.values().removeIf(w -> w.token() == token);
      }
      return;
    }
    synchronized (this) {
      if (closed) {
        timer.cancel(false);
      } else if (!token.fired) {
        timers.put(token, timer);  // removed when it fires, within longest
      }
    }
  }

  private synchronized void fire(Iterable<OperationId> ids, Token token, boolean scanAfter) {
    token.fired = true;
    timers.remove(token);
    if (closed) {
      return;
    }
    for (OperationId id : ids) {
      Waiting w = waiting.get(id);
      if (w != null && w.token() == token) {
        waiting.remove(id);
        due.put(id, w.journaledDue());
      }
    }
    if (scanAfter) {
      scanNeeded = true;  // a scan that ran out of room goes on once this wait has made some
    }
  }
}
