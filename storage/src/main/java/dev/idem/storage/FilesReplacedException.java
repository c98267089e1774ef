package dev.idem.storage;

/**
 * A commit that the database made, but into files that were removed, moved or replaced while the
 * embedded store had them open ({@link FileIdentity}): it is not durable where the store lives, and
 * the next open there will not find it; it is in the old files only, which someone may still put
 * back. So, as for any {@link CommitUnconfirmedException}, nobody may be told either that the write
 * is durable or that it did not happen. The store is unusable from then on.
 */
public final class FilesReplacedException extends CommitUnconfirmedException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message what was found, and where
   * @param cause the store's finding, which its later calls and its close repeat
   */
  public FilesReplacedException(String message, Throwable cause) {
    super(message, cause);
  }
}
