package dev.idem.jdbc.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Store} over one connection to a database that this process owns (embedded H2), with
 * group commit.
 *
 * <p>Every unit of work runs on the one connection, inside a savepoint, in a transaction that stays
 * open until the next commit. A SYNC write waits for a commit that covers it; whoever commits
 * commits every unit executed so far, so concurrent callers share commits (and disk syncs) instead
 * of paying one each. DEFERRED writes ride along with the next commit, or are committed by a
 * background flusher within the deferred commit interval.
 *
 * <p>With {@code syncToDisk}, each commit is followed by {@code CHECKPOINT SYNC} (one fsync of the
 * H2 file) on a second connection, so the sync does not block statements of the next group.
 *
 * <p>If a commit fails, the store is broken: every later call throws, because callers that were
 * waiting cannot know whether their record is on disk (and so must not send).
 */
public final class SingleConnectionStore implements Store {
  private static final Logger LOG = LoggerFactory.getLogger(SingleConnectionStore.class);

  private final String name;
  private final Connection connection;
  private final Connection syncConnection;
  private final Duration deferredCommitInterval;
  private final ScheduledExecutorService flusher;

  /** Guards the connection and the counters below it. */
  private final ReentrantLock statementLock = new ReentrantLock();
  private long executedSeq;
  private long lastSyncSeq;
  private boolean flushScheduled;
  private boolean closed;

  /** Held by the one thread that commits; others wait on it and usually find their work committed. */
  private final ReentrantLock commitLock = new ReentrantLock();
  private volatile long durableSeq;
  private volatile Throwable broken;

  /**
   * @param name for messages, such as the journal directory
   * @param connection the connection for all work; switched to manual commit here
   * @param syncConnection a second connection to the same database for {@code CHECKPOINT SYNC}, or
   *     null to not sync to disk
   * @param deferredCommitInterval the longest a DEFERRED write waits for its commit
   */
  public SingleConnectionStore(String name, Connection connection, Connection syncConnection,
      Duration deferredCommitInterval) throws SQLException {
    this.name = name;
    this.connection = connection;
    this.syncConnection = syncConnection;
    this.deferredCommitInterval = deferredCommitInterval;
    connection.setAutoCommit(false);
    this.flusher = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "idem-journal-flusher");
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public <T> T read(SqlWork<T> work) throws IdempotencyException {
    T result;
    long mustBeDurable;
    statementLock.lock();
    try {
      ensureUsable();
      result = runAtomically(work);
      mustBeDurable = lastSyncSeq;
    } finally {
      statementLock.unlock();
    }
    awaitDurable(mustBeDurable);
    return result;
  }

  @Override
  public <T> T write(Durability durability, SqlWork<T> work) throws IdempotencyException {
    T result;
    long mustBeDurable;
    statementLock.lock();
    try {
      ensureUsable();
      result = runAtomically(work);
      long seq = ++executedSeq;
      if (durability == Durability.SYNC) {
        lastSyncSeq = seq;
      } else if (!flushScheduled) {
        flushScheduled = true;
        flusher.schedule(this::backgroundFlush, deferredCommitInterval.toNanos(), TimeUnit.NANOSECONDS);
      }
      mustBeDurable = lastSyncSeq;
    } finally {
      statementLock.unlock();
    }
    awaitDurable(mustBeDurable);
    return result;
  }

  @Override
  public void flush() throws IdempotencyException {
    long target;
    statementLock.lock();
    try {
      ensureUsable();
      target = executedSeq;
    } finally {
      statementLock.unlock();
    }
    awaitDurable(target);
  }

  private void backgroundFlush() {
    statementLock.lock();
    try {
      flushScheduled = false;
      if (closed) {
        return;
      }
    } finally {
      statementLock.unlock();
    }
    try {
      flush();
    } catch (IdempotencyException | RuntimeException e) {
      LOG.error("Idem journal {}: committing deferred writes failed; the journal is unusable until reopened ({})",
          name, e.getMessage());
    }
  }

  private <T> T runAtomically(SqlWork<T> work) throws IdempotencyException {
    Savepoint savepoint;
    try {
      savepoint = connection.setSavepoint();
    } catch (SQLException e) {
      throw JournalErrors.wrap("savepoint on " + name, e);
    }
    try {
      T result = work.run(connection);
      connection.releaseSavepoint(savepoint);
      return result;
    } catch (SQLException e) {
      rollback(savepoint);
      throw JournalErrors.wrap("statement on " + name, e);
    } catch (IdempotencyException | RuntimeException | Error e) {
      rollback(savepoint);
      throw e;
    }
  }

  private void rollback(Savepoint savepoint) throws JournalException {
    try {
      connection.rollback(savepoint);
    } catch (SQLException e) {
      // The transaction may hold other callers' work; it cannot be trusted any more.
      broken = e;
      throw JournalErrors.wrap("rollback on " + name, e);
    }
  }

  /** Returns once everything up to {@code seq} is committed (and synced), committing it if need be. */
  private void awaitDurable(long seq) throws JournalException {
    if (durableSeq >= seq) {
      return;
    }
    commitLock.lock();
    try {
      if (durableSeq >= seq) {
        return;
      }
      failIfBroken();
      long target;
      statementLock.lock();
      try {
        target = executedSeq;
        connection.commit();
      } catch (SQLException e) {
        broken = e;
        throw JournalErrors.wrap("commit on " + name, e);
      } finally {
        statementLock.unlock();
      }
      if (syncConnection != null) {
        try (Statement st = syncConnection.createStatement()) {
          st.execute("CHECKPOINT SYNC");
        } catch (SQLException e) {
          broken = e;
          throw JournalErrors.wrap("disk sync on " + name, e);
        }
      }
      durableSeq = target;
    } finally {
      commitLock.unlock();
    }
  }

  private void ensureUsable() throws JournalException {
    if (closed) {
      throw new JournalException("journal " + name + " is closed", null);
    }
    failIfBroken();
  }

  private void failIfBroken() throws JournalException {
    Throwable b = broken;
    if (b != null) {
      throw new JournalException("journal " + name + " is unusable after a failed write; reopen it (earlier failure: "
          + (b instanceof SQLException s ? JournalErrors.diagnose(s) : b.getClass().getSimpleName()) + ")", b);
    }
  }

  @Override
  public void close() throws IdempotencyException {
    JournalException failure = null;
    statementLock.lock();
    try {
      if (closed) {
        return;
      }
    } finally {
      statementLock.unlock();
    }
    if (broken == null) {
      try {
        flush();
      } catch (JournalException e) {
        failure = e;
      }
    }
    statementLock.lock();
    try {
      closed = true;
      flusher.shutdownNow();
      for (Connection c : new Connection[] {syncConnection, connection}) {
        if (c != null) {
          try {
            if (c == connection && broken != null) {
              c.rollback();
            }
            c.close();
          } catch (SQLException e) {
            if (failure == null) {
              failure = JournalErrors.wrap("close of " + name, e);
            }
          }
        }
      }
    } finally {
      statementLock.unlock();
    }
    if (failure != null) {
      throw failure;
    }
  }
}
