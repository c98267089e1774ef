package dev.idem.bench;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * Times the four journal calls of a keyed call (begin, claim, attempt record, transition), so that
 * the benchmark can say how much of a durable call is the journal and how much is everything else.
 * Wall time on the calling thread, summed over calls; thread-safe.
 */
final class TimedJournal extends ForwardingJournal {
  /** One journal call's totals. */
  static final class Totals {
    final LongAdder calls = new LongAdder();
    final LongAdder nanos = new LongAdder();

    void add(long startNanos) {
      nanos.add(System.nanoTime() - startNanos);
      calls.increment();
    }

    /** @return mean µs per call, 0 if none */
    double micros() {
      long n = calls.sum();
      return n == 0 ? 0 : nanos.sum() / 1_000.0 / n;
    }
  }

  final Totals begin = new Totals();
  final Totals claim = new Totals();
  final Totals attempt = new Totals();
  final Totals transition = new Totals();
  /** The executor's attempt-and-transition, one journal call since issue 28. */
  final Totals attemptAndTransition = new Totals();

  TimedJournal(Journal delegate) {
    super(delegate);
  }

  @Override
  public BeginResult begin(NewOperation operation) throws IdempotencyException {
    long t = System.nanoTime();
    try {
      return super.begin(operation);
    } finally {
      begin.add(t);
    }
  }

  /** The executor's begin, which claims what it creates: one journal call, counted as the begin. */
  @Override
  public BeginResult beginAndClaim(NewOperation operation, String owner, Duration leaseFor)
      throws IdempotencyException {
    long t = System.nanoTime();
    try {
      return delegate().beginAndClaim(operation, owner, leaseFor);
    } finally {
      begin.add(t);
    }
  }

  @Override
  public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    long t = System.nanoTime();
    try {
      return super.claim(id, owner, now, leaseFor);
    } finally {
      claim.add(t);
    }
  }

  /**
   * The app's claim of an operation it named, timed as a claim; forwarded as one call so that the
   * delegate's brief wait for a row another process holds is made as it is without the timing.
   */
  @Override
  public Optional<Lease> claimWaiting(OperationId id, String owner, Instant now, Duration leaseFor)
      throws IdempotencyException {
    long t = System.nanoTime();
    try {
      return delegate().claimWaiting(id, owner, now, leaseFor);
    } finally {
      claim.add(t);
    }
  }

  @Override
  public void recordAttempt(OperationId id, Lease lease, AttemptRecord record) throws IdempotencyException {
    long t = System.nanoTime();
    try {
      super.recordAttempt(id, lease, record);
    } finally {
      attempt.add(t);
    }
  }

  @Override
  public void recordAttemptAndTransition(OperationId id, Lease lease, AttemptRecord record, Transition change)
      throws IdempotencyException {
    long t = System.nanoTime();
    try {
      delegate().recordAttemptAndTransition(id, lease, record, change);
    } finally {
      attemptAndTransition.add(t);
    }
  }

  @Override
  public OperationRecord transition(OperationId id, Lease lease, Transition change) throws IdempotencyException {
    long t = System.nanoTime();
    try {
      return super.transition(id, lease, change);
    } finally {
      transition.add(t);
    }
  }
}
