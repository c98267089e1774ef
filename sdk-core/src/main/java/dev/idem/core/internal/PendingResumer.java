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
import dev.idem.core.ResumeHandler;
import dev.idem.core.ResumeSummary;
import dev.idem.core.spi.Transport;
import dev.idem.core.Sleeper;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass of {@code IdempotentExecutor.resumePending}: pages through the due operations, settles
 * the expired ones, re-sends the rest through their handler's transport, and tells the handler.
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

  private int examined;
  private int succeeded;
  private int failed;
  private int uncertain;
  private int pending;
  private int expired;
  private int unhandled;
  private int leasedElsewhere;
  private Instant earliestForeignExpiry;

  public PendingResumer(EngineSettings settings, KeyRetention retention, Runner runner) {
    this.settings = settings;
    this.retention = retention;
    this.runner = runner;
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

  /** Runs the pass; single use. */
  public ResumeSummary resume(Map<String, ResumeHandler> handlers) throws IdempotencyException {
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = settings.journal().findDue(settings.clock().instant(), after, PAGE);
      for (OperationRecord record : page) {
        examined++;
        ResumeHandler handler = handlers.get(record.id().operation());
        if (handler == null) {
          unhandled++;
        } else {
          resumeOne(record, handler);
        }
      }
      if (page.size() < PAGE) {
        break;
      }
      after = page.get(page.size() - 1).id();
    }
    resumeLeased(handlers);
    return new ResumeSummary(examined, succeeded, failed, uncertain, pending, expired, unhandled, leasedElsewhere);
  }

  /**
   * findDue leaves out what is IN_FLIGHT under a live lease. Look at those too: this owner's own
   * leases are resumed (a restarted incarnation reclaims them), the others are counted, so a
   * startup resume never misses them silently.
   */
  private void resumeLeased(Map<String, ResumeHandler> handlers) throws IdempotencyException {
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = settings.journal().findByState(OperationState.IN_FLIGHT, after, PAGE);
      Instant now = settings.clock().instant();
      for (OperationRecord record : page) {
        if (!record.isLeasedAt(now)) {
          continue;  // expired since findDue looked, or about to be: the next pass takes it
        }
        examined++;
        ResumeHandler handler = handlers.get(record.id().operation());
        if (handler == null) {
          unhandled++;
        } else if (settings.owner().equals(record.owner())) {
          resumeOne(record, handler);
        } else {
          leasedElsewhere++;
          Instant expiry = record.leaseExpiresAt();
          if (expiry != null && (earliestForeignExpiry == null || expiry.isBefore(earliestForeignExpiry))) {
            earliestForeignExpiry = expiry;
          }
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
        expired++;
        if (retention.expireIfDue(record) == OperationState.UNCERTAIN) {
          OperationRecord now = settings.journal().find(record.id()).orElse(record);
          notify(handler, null, (OperationException) AttemptLoop.settled(now).failure());
          uncertain++;
          return;
        }
      }
      notify(handler, runner.run(record, handler.transport()), null);
      succeeded++;
    } catch (OperationException e) {
      notify(handler, null, e);
      switch (e.state()) {
        case FAILED -> failed++;
        case UNCERTAIN -> uncertain++;
        default -> pending++;
      }
    } catch (IdempotencyKeyReusedException e) {
      notify(handler, null, new OperationFailedException(e.getMessage(), e, record.id(), record.attempts(), null));
      failed++;
    } catch (JournalException e) {
      throw e;
    } catch (IdempotencyException e) {
      LOG.warn("resuming {} failed: {}", record.id(), e.toString());
      pending++;
    }
  }

  private static void notify(ResumeHandler handler, Outcome outcome, OperationException failure) {
    try {
      if (outcome != null) {
        handler.onSuccess(outcome);
      } else {
        handler.onFailure(failure);
      }
    } catch (RuntimeException e) {
      LOG.error("a resume handler threw; the operation's state in the journal is unaffected", e);
    }
  }
}
