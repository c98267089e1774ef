package dev.idem.core.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.Outcome;
import java.time.Duration;

/**
 * What the driver of an {@link AttemptLoop} does next. The loop decides; the synchronous and
 * asynchronous drivers only send, wait, or finish, so both share one algorithm.
 */
public sealed interface Step {
  /** Send the next attempt now. */
  record Send() implements Step {}

  /** Wait, then call {@link AttemptLoop#afterWait()}. */
  record Wait(Duration delay) implements Step {}

  /** Finished with a success. */
  record Done(Outcome outcome) implements Step {}

  /** Finished without a success; throw or complete exceptionally with this. */
  record Fail(IdempotencyException exception) implements Step {}

  /** The failure of a {@link Fail} step; null for any other step. */
  default IdempotencyException failure() {
    return this instanceof Fail f ? f.exception() : null;
  }
}
