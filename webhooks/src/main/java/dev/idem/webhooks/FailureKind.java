package dev.idem.webhooks;

/** How a handler failure is treated. */
public enum FailureKind {
  /** Try again later, as the retry policy says; a dead letter when it gives up. */
  RETRY,
  /** Retrying cannot help: a dead letter now. */
  PERMANENT
}
