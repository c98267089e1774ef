package dev.idem.core;

import dev.idem.core.spi.Journal;

/**
 * The journal could not be read or written (locked by another process, read-only, disk full,
 * database down). When {@link Journal#begin} throws it, nothing was sent by that call; if the
 * journal could not tell whether the begin's write took effect (its commit's answer was lost), the
 * message says the operation may have been journaled: a resume then sends it with its key, so
 * retry with the same key, never a new one.
 */
public class JournalException extends IdempotencyException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception for a journal read or write that failed.
   *
   * @param message what failed, and where
   * @param cause the underlying failure, or null
   */
  public JournalException(String message, Throwable cause) {
    super(message, cause);
  }
}
