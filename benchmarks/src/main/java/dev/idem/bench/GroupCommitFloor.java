package dev.idem.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * The floor under the throughput goals (P3, G1, W1): what a durable key costs at many threads in a
 * textbook design, with no Idem code. One SQLite connection with the journal's settings (WAL, {@code synchronous=FULL})
 * and one writer thread, the textbook group commit that DESIGN.md measured at about 65,000 durable
 * inserts/s: callers queue a row, the writer takes every queued row (up to {@value #MAX_BATCH}), writes
 * each ({@link FloorTable}), commits once, and wakes the callers that wait. A row written with
 * {@code wait} false rides on the next commit, as a call's outcome does in the journal.
 *
 * <p>With its textbook table ({@link KeyTable}) it keeps no JSON, no checksum, no state machine, no
 * lease, no index but the key's: a row is a key, a text and a state. What a floor row measures on
 * top of its baseline is therefore the durable write itself (the SQLite work, the disk sync, the
 * hand-offs to and from the writer), which any design that writes a key to disk before it sends
 * pays. With the journal's table ({@link JournalRowTable}) it also pays for keeping what the journal
 * keeps, its row and its indexes, still with no Idem code.
 *
 * <p>Thread-safe. {@link #close} commits what was queued before it. A write after the writer failed
 * or stopped throws.
 */
final class GroupCommitFloor implements AutoCloseable {
  /** The most rows one commit carries. */
  static final int MAX_BATCH = 256;

  private final Connection connection;
  private final FloorTable table;
  private final ArrayBlockingQueue<Row> queue = new ArrayBlockingQueue<>(4096);
  private final Thread writer;
  private volatile boolean closed;
  /** Set by the writer as it stops, before it wakes whoever still waits. */
  private volatile boolean stopped;
  private volatile Throwable failure;

  private static final class Row {
    final String key;
    final String text;
    final String state;
    final Thread waiter;
    volatile boolean done;

    Row(String key, String text, String state, Thread waiter) {
      this.key = key;
      this.text = text;
      this.state = state;
      this.waiter = waiter;
    }
  }

  private GroupCommitFloor(Connection connection, FloorTable table) throws SQLException {
    this.connection = connection;
    this.table = table;
    table.open(connection);
    connection.setAutoCommit(false);
    this.writer = new Thread(this::writeLoop, "bench-group-commit-floor");
    writer.setDaemon(true);
    writer.start();
  }

  /** Opens (creates) the floor's database at {@code file}, with the textbook table ({@link KeyTable}), and starts its writer. */
  static GroupCommitFloor open(Path file) throws SQLException {
    return open(file, new KeyTable());
  }

  /** Opens (creates) the floor's database at {@code file}, writing {@code table}'s rows, and starts its writer. */
  static GroupCommitFloor open(Path file, FloorTable table) throws SQLException {
    return new GroupCommitFloor(SqliteFloor.connect(file), table);
  }

  /**
   * Writes {@code key}'s row (insert, or its state's update).
   *
   * @param wait whether to return only once the row's commit is on the disk
   * @throws IOException if the writer failed or the floor is closed
   */
  void write(String key, String text, String state, boolean wait) throws IOException {
    Row row = new Row(key, text, state, wait ? Thread.currentThread() : null);
    try {
      queue.put(row);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    while (wait && !row.done) {
      checkWriter();
      LockSupport.park(this);
    }
    if (!row.done) {
      checkWriter();
    }
  }

  /** Throws if the writer failed, or stopped (closed) before it could take this row. */
  private void checkWriter() throws IOException {
    if (failure != null) {
      throw new IOException("the floor's writer failed", failure);
    }
    if (stopped) {
      throw new IOException("the floor is closed");
    }
  }

  private void writeLoop() {
    List<Row> batch = new ArrayList<>(MAX_BATCH);
    try {
      while (true) {
        Row first = queue.poll(100, java.util.concurrent.TimeUnit.MILLISECONDS);
        if (first == null) {
          // Closed: everything queued before it (a call's outcome, written without waiting) is
          // committed first, as the journal's close flushes its deferred writes.
          if (closed) {
            return;
          }
          continue;
        }
        batch.add(first);
        queue.drainTo(batch, MAX_BATCH - 1);
        long now = System.currentTimeMillis();
        for (Row r : batch) {
          table.write(r.key, r.text, r.state, now);
        }
        connection.commit();
        for (Row r : batch) {
          r.done = true;
          wake(r);
        }
        batch.clear();
      }
    } catch (Throwable t) {
      failure = t;
    } finally {
      stopped = true;
      // A caller still waiting learns of the failure or the close rather than park for ever.
      for (Row r : batch) {
        wake(r);
      }
      for (Row r : queue) {
        wake(r);
      }
    }
  }

  private static void wake(Row r) {
    if (r.waiter != null) {
      LockSupport.unpark(r.waiter);
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    try {
      writer.join(5_000);
      table.close();
      connection.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (SQLException e) {
      throw new IOException(e);
    }
  }
}
