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
import dev.idem.core.Transport;
import java.util.List;
import java.util.Map;
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

  public PendingResumer(EngineSettings settings, KeyRetention retention, Runner runner) {
    this.settings = settings;
    this.retention = retention;
    this.runner = runner;
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
        return new ResumeSummary(examined, succeeded, failed, uncertain, pending, expired, unhandled);
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
