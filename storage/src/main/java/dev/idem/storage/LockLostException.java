package dev.idem.storage;

/**
 * A commit that the database made while the store's lock file had been removed or replaced (a
 * temp-file cleaner, a script clearing "stale" lock files): the lock this process holds is on the
 * removed file, so another process may have opened the store since, and its crash recovery may act
 * on what this commit wrote (an in-flight lease it takes for a dead process's). The write is in the
 * database, but nobody may be told that it stands as this process made it, nor that it did not
 * happen: as for any {@link CommitUnconfirmedException}. The store is unusable from then on.
 */
public final class LockLostException extends CommitUnconfirmedException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was found, and where
   * @param cause the store's finding, which its later calls and its close repeat
   */
  public LockLostException(String message, Throwable cause) {
    super(message, cause);
  }
}
