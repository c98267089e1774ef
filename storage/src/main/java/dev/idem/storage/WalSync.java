package dev.idem.storage;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * {@link DiskSync#ofWal}: an fdatasync of the {@code -wal} file that an interrupt does not break.
 *
 * <p>A {@link FileChannel} is interruptible: a thread interrupted before or during
 * {@link FileChannel#force} (an executor's {@code shutdownNow}, a cancelled task, a processor
 * closing its workers) gets {@link java.nio.channels.ClosedByInterruptException}, and the channel
 * is closed for every thread. The store then took the failed sync for a broken disk and refused
 * every later call until reopened, although nothing was wrong with the file. So a sync whose
 * channel was closed under it (by an interrupt of its own thread or of another syncing thread)
 * opens the channel again and syncs again with its thread's interrupt set aside, as many times as
 * interrupts come, then sets the interrupt back for the caller to see. After {@link #close} a sync fails.
 *
 * <p>Thread-safe: concurrent syncs share the channel; only reopening it is serialized.
 */
final class WalSync implements DiskSync {
  private final Path wal;
  private volatile FileChannel channel;
  private boolean closed;

  private WalSync(Path wal, FileChannel channel) {
    this.wal = wal;
    this.channel = channel;
  }

  /** Opens the {@code -wal} file, creating it empty if SQLite has not made it yet. */
  static WalSync open(Path wal) throws IOException {
    return new WalSync(wal, openChannel(wal));
  }

  private static FileChannel openChannel(Path wal) throws IOException {
    // READ and WRITE: Windows' FlushFileBuffers needs write access.
    return FileChannel.open(wal, StandardOpenOption.READ, StandardOpenOption.WRITE, StandardOpenOption.CREATE);
  }

  @Override
  public void sync() throws IOException {
    FileChannel used = channel;
    boolean interrupted = false;
    try {
      while (true) {
        try {
          used.force(false);
          return;
        } catch (ClosedChannelException e) {
          // Another interrupt may come while the channel is reopened or during the next force
          // (a second interrupter: a close cutting a handler short after a watchdog interrupted
          // it): each one is set aside in turn. The loop ends when a force succeeds or the reopen
          // fails (closed, or the file cannot be opened), so it never spins on a broken file.
          interrupted |= Thread.interrupted();
          used = reopened(used, e);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The channel that replaced {@code failed}, opened now if no other sync did; fails after close. */
  private synchronized FileChannel reopened(FileChannel failed, ClosedChannelException cause) throws IOException {
    if (closed) {
      throw cause;
    }
    if (channel == failed) {
      channel = openChannel(wal);
    }
    return channel;
  }

  @Override
  public synchronized void close() throws IOException {
    closed = true;
    channel.close();
  }
}
