package dev.idem.storage;

import dev.idem.core.JournalException;

/**
 * A write whose commit was asked for but not confirmed: {@code commit()} itself failed (the
 * connection dropped while PostgreSQL answered it, say, or SQLite's commit or the disk sync after
 * it failed). The database may have made the write durable or not; only a fresh read can tell.
 * Callers that would otherwise say "nothing was written" must not: the write may be there, and a
 * resume may act on it.
 */
public sealed class CommitUnconfirmedException extends JournalException
    permits FilesReplacedException, LockLostException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what failed, and where (as {@link StoreErrors#wrap} words it)
   * @param cause the driver's exception
   */
  public CommitUnconfirmedException(String message, Throwable cause) {
    super(message, cause);
  }
}
