package dev.idem.storage;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@link DiskSync#ofCheckpoint}: H2's {@code CHECKPOINT SYNC}, run on a thread of its own.
 *
 * <p>H2's file layer takes an interrupt pending at its I/O for a closed channel, opens the file
 * again, and clears the interrupt for good ({@code FileRetryOnInterrupt}). Run on the caller's
 * thread, the checkpoint lost every interrupt that reached the caller during the sync: a worker
 * told to stop (an executor's shutdownNow, a webhook watchdog) went on as if never told. On its own
 * thread, no interrupt of the caller reaches H2; the caller waits for it without being
 * interruptible, as the store's waits are (the sync is part of a round other callers wait for),
 * and keeps its interrupt for its own caller to see.
 *
 * <p>Thread-safe; the store runs one sync at a time. The thread starts at the first sync and ends
 * at {@link #close}.
 */
final class CheckpointSync implements DiskSync {
  private final Connection connection;
  private final PreparedStatement checkpoint;
  private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "idem-h2-checkpoint-sync");
    t.setDaemon(true);
    return t;
  });

  /** Takes {@code connection} over: closed with this sync, or here if the statement cannot be prepared. */
  CheckpointSync(Connection connection) throws SQLException {
    this.connection = connection;
    try {
      this.checkpoint = connection.prepareStatement("CHECKPOINT SYNC");
    } catch (SQLException | RuntimeException e) {
      try {
        connection.close();
      } catch (SQLException closeFailed) {
        e.addSuppressed(closeFailed);
      }
      throw e;
    }
  }

  @Override
  public void sync() throws SQLException {
    Future<?> done = thread.submit(() -> {
      checkpoint.execute();
      return null;
    });
    boolean interrupted = false;
    try {
      while (true) {
        try {
          done.get();
          return;
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          Throwable cause = e.getCause();
          if (cause instanceof SQLException sql) {
            throw sql;
          }
          if (cause instanceof RuntimeException runtime) {
            throw runtime;
          }
          if (cause instanceof Error error) {
            throw error;
          }
          throw new IllegalStateException(cause); // execute throws nothing else
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void close() throws SQLException {
    thread.shutdown();
    try {
      checkpoint.close();
    } finally {
      connection.close();
    }
  }
}
