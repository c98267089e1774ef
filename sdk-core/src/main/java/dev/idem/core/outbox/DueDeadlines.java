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
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
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
 * <p>The wait a writer chose is read off the record: the transition that leaves an operation
 * PENDING journals {@code updatedAt} (when it was written) and {@code nextAttemptAt} (that instant
 * plus the wait: a backoff, an honoured Retry-After, an empty budget's or an open breaker's wait,
 * under whatever policy the writer ran), both read off the writer's clock at the same instant. So
 * {@code nextAttemptAt - updatedAt} is the wait chosen, whatever its length, and a record whose
 * {@code updatedAt} is after this clock's now was written on a clock that was ahead (this one
 * before it stepped back, or another host's).
 * <ul>
 *   <li>{@link #arm}: a delivery of this dispatcher ended PENDING. The record's chosen wait is
 *       kept on the scheduler, counted from now; when it has passed the operation is due here,
 *       whatever the wall clock says.</li>
 *   <li>{@link #scanIfStepped}: at the first poll (after a restart only the journal's times exist)
 *       and whenever the wall clock is found behind where an earlier poll read it, the PENDING
 *       operations of registered names are read once, and each written after this clock's now is
 *       due here once its chosen wait has passed on the scheduler, counted from that poll.</li>
 * </ul>
 * Neither ever makes an operation due before its writer's wait has passed. A record written at or
 * before this clock's now is left to the journal's due time, which is right whatever its wait's
 * length; its limit: one not armed here and written more than a step's length before a step back
 * (not due by then) waits up to the step's length more, as does an IN_FLIGHT lease journaled on a clock that
 * was ahead (its expiry is the journal's claim check, not a due time kept here). An operation due
 * here is delivered only while the journal still holds it PENDING with the due time it had when
 * its wait began: one another instance or an inline call delivered meanwhile (and perhaps queued
 * again with a new due time of its own) is dropped, never sent ahead of its new backoff.
 *
 * <p>Bounded: at most {@link #MAX_KEPT} operations are kept at once; beyond that, an operation is
 * left to its journaled due time (a scan that stopped there scans again once its shortest wait has
 * passed). Thread-safe: one monitor, never held while the journal is read or a task scheduled.
 */
final class DueDeadlines {
  private static final Logger LOG = LoggerFactory.getLogger(OutboxDispatcher.class);
  /** The most operations kept at once, waiting or due: a few hundred bytes each. */
  static final int MAX_KEPT = 10_000;

  private final Journal journal;
  private final Clock clock;
  private final Scheduler scheduler;
  private final Set<String> registered;
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
   * @param registered the operation names this dispatcher delivers
   */
  DueDeadlines(Journal journal, Clock clock, Scheduler scheduler, Set<String> registered, int pageSize) {
    this.journal = journal;
    this.clock = clock;
    this.scheduler = scheduler;
    this.registered = registered;
    this.pageSize = pageSize;
  }

  /**
   * A delivery of {@code record}'s operation ended with it PENDING, due at
   * {@code record.nextAttemptAt()}: it is due here once the wait its writer chose
   * ({@link #chosenWait}) has passed on the scheduler, counted from now.
   */
  void arm(OperationRecord record) {
    if (record.state() != OperationState.PENDING) {
      return;
    }
    Instant journaledDue = record.nextAttemptAt();
    start(Map.of(record.id(), journaledDue == null ? Instant.MIN : journaledDue), chosenWait(record), false);
  }

  /**
   * At the first call, and whenever {@code now} is behind the instant the last call was given (the
   * wall clock stepped back): reads the PENDING operations of registered names, and for each
   * written after {@code now} (on a clock that was ahead) keeps the wait its writer chose. A journal
   * that cannot be read is scanned again at the next call.
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
    // By wait, so that operations written with the same wait share one scheduler task.
    TreeMap<Duration, Map<OperationId, Instant>> ahead = new TreeMap<>();
    int found = 0;
    boolean full = false;
    try {
      int room = room();
      OperationId after = null;
      scan:
      while (true) {
        // Its own names only: a journal shared with another service's backlog is not read for it.
        List<OperationRecord> page = registered.isEmpty() ? List.of()
            : journal.findByState(OperationState.PENDING, registered, after, pageSize);
        if (page.isEmpty()) {
          break;  // only an empty page is the last: a journal may return short ones
        }
        for (OperationRecord r : page) {
          Instant at = r.nextAttemptAt();
          if (registered.contains(r.id().operation()) && at != null && r.updatedAt().isAfter(now) && !isKept(r.id())) {
            if (found >= room) {
              full = true;
              break scan;
            }
            ahead.computeIfAbsent(chosenWait(r), w -> new LinkedHashMap<>()).put(r.id(), at);
            found++;
          }
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
      LOG.info("{} queued operation(s) were journaled on a clock ahead of this one (this one before it stepped back,"
          + " or another host's): each is due once the wait chosen for it has passed, {} to {}", found,
          ahead.firstKey(), ahead.lastKey());
      // A scan that ran out of room goes on once the shortest of these waits has made some.
      boolean scanAfter = full;
      for (Map.Entry<Duration, Map<OperationId, Instant>> e : ahead.entrySet()) {
        start(e.getValue(), e.getKey(), scanAfter);
        scanAfter = false;
      }
    } else if (full) {
      synchronized (this) {
        scanNeeded = true;  // no room at all now: look again at the next poll
      }
    }
  }

  /**
   * The wait {@code record}'s writer chose: from the instant it wrote the record (its
   * {@code updatedAt}, on the writer's clock) to the due time it wrote with it; zero if none.
   */
  private static Duration chosenWait(OperationRecord record) {
    Instant at = record.nextAttemptAt();
    if (at == null) {
      return Duration.ZERO;
    }
    Duration wait = Duration.between(record.updatedAt(), at);
    return wait.isNegative() ? Duration.ZERO : wait;
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
        timers.put(token, timer);  // removed when it fires
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
