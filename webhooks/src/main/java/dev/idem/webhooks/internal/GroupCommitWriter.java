package dev.idem.webhooks.internal;

import dev.idem.webhooks.WebhookInboxException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The inbox's only writer: one thread, one connection. Callers hand it work and wait; it drains
 * what queued up meanwhile into one transaction and completes every caller's future only after
 * that transaction committed, so N concurrent deliveries cost one durable commit (group commit)
 * and none is acknowledged before it is on disk.
 *
 * <p>Bounded: the queue holds at most {@code capacity} items and a caller waits at most
 * {@code timeout} for a place and for its commit. If one item fails, the batch is rolled back and
 * its items are run again one transaction each, so only the failing item fails. If the connection
 * breaks, the next batch opens a new one. If the thread itself dies, every later call fails with
 * that cause instead of hanging.
 */
public final class GroupCommitWriter implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GroupCommitWriter.class);

  private record Item<T>(SqlWork<T> work, CompletableFuture<T> done) {
    void complete(Object result) {
      @SuppressWarnings("unchecked") T t = (T) result;
      done.complete(t);
    }
  }

  private static final Item<Void> STOP = new Item<>(c -> null, new CompletableFuture<>());

  private final ConnectionSource source;
  private final BlockingQueue<Item<?>> queue;
  private final int maxBatch;
  private final Duration timeout;
  private final Thread thread;
  private volatile Throwable died;
  private volatile boolean closed;
  private Connection connection;  // writer thread only

  public GroupCommitWriter(ConnectionSource source, String name, int capacity, int maxBatch, Duration timeout) {
    this.source = source;
    this.queue = new ArrayBlockingQueue<>(capacity);
    this.maxBatch = maxBatch;
    this.timeout = timeout;
    this.thread = new Thread(this::loop, name);
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Runs {@code work} in the next transaction and returns its result once committed.
   *
   * @throws WebhookInboxException if the queue stays full, the commit fails or takes longer than
   *     the timeout, or the writer stopped
   */
  public <T> T execute(SqlWork<T> work) {
    checkRunning();
    Item<T> item = new Item<>(work, new CompletableFuture<>());
    try {
      if (!queue.offer(item, timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        throw new WebhookInboxException("the inbox write queue stayed full for " + timeout, null);
      }
      if (closed || died != null) {
        // stopped after the check above: the loop may never see the item
        queue.remove(item);
        checkRunning();
      }
      return item.done().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new WebhookInboxException("interrupted while waiting for the inbox commit", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof WebhookInboxException w) {
        throw new WebhookInboxException(w.getMessage(), w);
      }
      throw new WebhookInboxException("the inbox write failed: " + cause, cause);
    } catch (TimeoutException e) {
      throw new WebhookInboxException("the inbox commit took longer than " + timeout, e);
    }
  }

  private void checkRunning() {
    Throwable d = died;
    if (d != null) {
      throw new WebhookInboxException("the inbox writer thread died: " + d, d);
    }
    if (closed) {
      throw new WebhookInboxException("the inbox is closed", null);
    }
  }

  private void loop() {
    List<Item<?>> batch = new ArrayList<>(maxBatch);
    try {
      while (true) {
        Item<?> first = queue.take();
        if (first == STOP) {
          break;
        }
        batch.add(first);
        queue.drainTo(batch, maxBatch - 1);
        boolean stop = batch.remove(STOP);
        runBatch(batch);
        batch.clear();
        if (stop) {
          break;
        }
      }
    } catch (InterruptedException e) {
      // close() interrupts only when the thread ignored STOP
    } catch (Throwable t) {
      died = t;
      LOG.error("the webhook inbox writer died; every later inbox write fails with this cause", t);
    } finally {
      failAll(batch, died);
      List<Item<?>> rest = new ArrayList<>();
      queue.drainTo(rest);
      failAll(rest, died);
      closeConnection();
    }
  }

  private void failAll(List<Item<?>> items, Throwable cause) {
    for (Item<?> i : items) {
      i.done().completeExceptionally(new WebhookInboxException(
          cause == null ? "the inbox is closed" : "the inbox writer thread died: " + cause, cause));
    }
  }

  private void runBatch(List<Item<?>> batch) {
    List<Object> results = new ArrayList<>(batch.size());
    try {
      Connection c = connection();
      for (Item<?> item : batch) {
        results.add(item.work().run(c));
      }
      c.commit();
    } catch (SQLException | RuntimeException e) {
      rollback();
      if (batch.size() == 1) {
        batch.get(0).done().completeExceptionally(e);
        return;
      }
      // Find the culprit: each item alone, so that one bad item does not fail its neighbours.
      for (Item<?> item : batch) {
        runBatch(List.of(item));
      }
      return;
    }
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).complete(results.get(i));
    }
  }

  private Connection connection() throws SQLException {
    if (connection == null || connection.isClosed()) {
      connection = source.open();
      connection.setAutoCommit(false);
    }
    return connection;
  }

  private void rollback() {
    if (connection == null) {
      return;
    }
    try {
      connection.rollback();
    } catch (SQLException e) {
      // the connection is broken: drop it, the next batch reconnects
      closeConnection();
    }
  }

  private void closeConnection() {
    if (connection != null) {
      try {
        connection.close();
      } catch (SQLException e) {
        LOG.debug("closing the inbox writer connection failed", e);
      }
      connection = null;
    }
  }

  /** Finishes the queued work, then stops the thread and closes the connection. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (!queue.offer(STOP, timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        thread.interrupt();
      }
      thread.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
