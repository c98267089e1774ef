package dev.idem.storage;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;

/**
 * The OS lock that keeps a store to one owner: {@link FileChannel#tryLock()} on a lock file, held
 * while its channel stays open (closing the channel, or the process ending, releases it). The
 * embedded store ({@link EmbeddedFiles}) and a store in an app's SQLite file
 * ({@link SqliteFileLock}) both take theirs here, and say in their own words who holds it. Stateless.
 */
final class FileLocks {
  private FileLocks() {}

  /** What a store says when its lock is held. */
  @FunctionalInterface
  interface Refusal {
    /**
     * @param inThisJvm true if another open in this JVM holds the lock ({@link FileChannel#tryLock()}
     *     throws {@link OverlappingFileLockException} then), false if another process does
     */
    JournalException held(boolean inThisJvm);
  }

  /**
   * Takes the lock of the lock file open in {@code channel}, or closes the channel: on return the
   * channel holds the lock; on any exception it is closed.
   *
   * @throws JournalException from {@code refusal}, if this JVM or another process holds the lock
   * @throws IOException if the lock could not be tried
   */
  static void lock(FileChannel channel, Refusal refusal) throws IOException {
    boolean locked;
    try {
      locked = channel.tryLock() != null;
    } catch (OverlappingFileLockException e) {
      closeQuietly(channel);
      throw refusal.held(true);
    } catch (IOException | RuntimeException e) {
      closeQuietly(channel);
      throw e;
    }
    if (!locked) {
      closeQuietly(channel);
      throw refusal.held(false);
    }
  }

  /** Closes a lock file's channel, which releases its lock. */
  static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // nothing left to do: the OS drops the lock with the process
    }
  }
}
