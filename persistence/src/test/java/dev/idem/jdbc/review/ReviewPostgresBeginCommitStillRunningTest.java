package dev.idem.jdbc.review;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.IdempotencyException;
import dev.idem.core.Operation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.Transport;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.jdbc.support.WrappingDataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The begin's COMMIT reaches PostgreSQL, which is slow to carry it out (a synchronous standby that
 * is late to acknowledge, a slow WAL flush; here: a deferred constraint trigger that waits for an
 * advisory lock the test holds). The client gives up on it (pgjdbc's socketTimeout fires and the
 * driver throws 08006, "An I/O error occurred while sending to the backend") while the server
 * backend still holds the transaction. The journal then reads the row on a fresh connection: the
 * insert is not committed yet, so it is not visible, and the caller is told "read again, the
 * operation is not in the journal: nothing was sent: an operation with no durable record is never
 * sent". A moment later the server finishes the COMMIT: the row is durable, IN_FLIGHT under this
 * instance's lease, and another instance's resume sends it. A caller who believed the message and
 * retried under a new key gets two effects. A SELECT on a fresh connection cannot tell "absent"
 * from "committing right now"; an INSERT ... ON CONFLICT of the same row would have waited for the
 * in-doubt transaction instead.
 *
 * <p>Now the journal makes the begin's insert again on a fresh connection: it waits until the server
 * has finished the COMMIT, finds the row this call wrote, and the call goes on with it: one send,
 * with its key, and nothing for another instance's resume. (The test first asserted the message of
 * the old behaviour; the call no longer fails, so it asserts the one send instead.)
 *
 * <p>The call and the server's COMMIT each block a thread at the same time (the call waits until the
 * COMMIT is seen waiting), so they run on threads of the test's own, not on CompletableFuture's
 * default executor: with 2 CPUs that is a new thread per task on JDK 17 but, from JDK 25 on, the
 * common ForkJoinPool with parallelism 1, whose one worker would wait for the COMMIT queued behind it.
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresBeginCommitStillRunningTest {
  private static final long LOCK = 424242;
  private final Ops ops = new Ops(5151);
  private final VirtualTime time = new VirtualTime(T0);
  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final List<IdempotencyKey> sent = new CopyOnWriteArrayList<>();
  private final Transport server = (request, key) -> {
    sent.add(key);
    return Ops.ok("{\"id\":1}");
  };

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  @Test
  void aBeginReportedNeverSentIsNeverSent(PgDatabase db) throws Exception {
    AtomicBoolean armed = new AtomicBoolean();
    AtomicReference<CompletableFuture<Void>> serverCommit = new AtomicReference<>();
    try (Connection holder = db.dataSource().getConnection()) {
      SlowCommitGivenUp flaky = new SlowCommitGivenUp(db.dataSource(), armed, serverCommit, holder, threads);
      try (JdbcJournal journalA = JdbcJournal.dataSource(flaky).open();
          JdbcJournal journalB = JdbcJournal.dataSource(db.dataSource()).open()) {
        try (Statement st = holder.createStatement()) {
          st.execute("CREATE FUNCTION review_slow_commit() RETURNS trigger LANGUAGE plpgsql AS"
              + " $$ BEGIN PERFORM pg_advisory_xact_lock(" + LOCK + "); RETURN NULL; END $$");
          st.execute("CREATE CONSTRAINT TRIGGER review_slow_commit AFTER INSERT ON idem_operation"
              + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION review_slow_commit()");
          st.execute("SELECT pg_advisory_lock(" + LOCK + ")"); // the COMMIT will wait for this
        }
        Operation op = Operation.builder("create-order", Ops.request("{\"amount\":100}")).key(ops.key()).build();

        armed.set(true);
        // The begin's write is made again on a fresh connection; on PostgreSQL that insert waits for
        // the in-doubt transaction (a read would not), so the call runs on a thread of its own.
        CompletableFuture<Void> call = CompletableFuture.runAsync(() -> {
          try {
            executor(journalA, "instance-a").execute(op, server);
          } catch (IdempotencyException e) {
            throw new CompletionException(e);
          }
        }, threads);
        try (Connection observer = db.dataSource().getConnection()) {
          awaitWaitingOnTransaction(observer, call);
        }

        // The server finishes the COMMIT it received before the client gave up.
        try (Statement st = holder.createStatement()) {
          st.execute("SELECT pg_advisory_unlock(" + LOCK + ")");
        }
        serverCommit.get().get(30, TimeUnit.SECONDS);
        call.get(30, TimeUnit.SECONDS); // the row was there: the call went on with it and sent it
        assertEquals(List.of(op.id().key()), sent, "sent once, by the caller, with its key");

        time.advance(Duration.ofMinutes(3)); // past instance-a's lease
        executor(journalB, "instance-b").resumePending(
            Map.of("create-order", ResumeHandler.of(server, o -> { }, f -> { })));

        assertEquals(List.of(op.id().key()), sent, "one send, by the caller; none by instance-b's resume");
      }
    }
  }

  /**
   * Until a session waits for another transaction to end (the begin made again, waiting on the
   * in-doubt insert's unique-index entry): a condition, not a delay. A call that ended first
   * (it did not wait) is reported as it ended.
   */
  private static void awaitWaitingOnTransaction(Connection observer, CompletableFuture<Void> call) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      if (call.isDone()) {
        call.get();
        throw new AssertionError("the call ended while the begin's COMMIT was still being carried out");
      }
      try (Statement st = observer.createStatement();
          ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'transactionid'"
              + " AND NOT granted")) {
        rs.next();
        if (rs.getLong(1) > 0) {
          return;
        }
      }
      Thread.onSpinWait();
    }
    throw new IllegalStateException("the begin was never made again");
  }

  private IdempotentExecutor executor(JdbcJournal journal, String owner) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5).build();
  }

  /**
   * Once armed, the next commit is handed to the server (on a thread of its own, as the backend
   * goes on with it) and, once the server is seen waiting in it, the client gives up on it as
   * pgjdbc does when its socket times out: 08006, and the connection is unusable from then on.
   */
  private static final class SlowCommitGivenUp extends WrappingDataSource {
    private final AtomicBoolean armed;
    private final AtomicReference<CompletableFuture<Void>> serverCommit;
    private final Connection observer;
    private final Executor threads;

    SlowCommitGivenUp(DataSource delegate, AtomicBoolean armed,
        AtomicReference<CompletableFuture<Void>> serverCommit, Connection observer, Executor threads) {
      super(delegate);
      this.armed = armed;
      this.serverCommit = serverCommit;
      this.observer = observer;
      this.threads = threads;
    }

    @Override
    protected Connection wrap(Connection c) {
      AtomicBoolean broken = new AtomicBoolean();
      InvocationHandler h = (proxy, m, args) -> {
        if (broken.get()) {
          if (m.getName().equals("close") || m.getName().equals("isClosed")) {
            return m.getName().equals("isClosed") ? Boolean.TRUE : null;
          }
          throw new SQLException("This connection has been closed.", "08003");
        }
        if (m.getName().equals("commit") && armed.compareAndSet(true, false)) {
          broken.set(true);
          serverCommit.set(CompletableFuture.runAsync(() -> {
            try {
              c.commit();
              c.close();
            } catch (SQLException e) {
              throw new IllegalStateException(e);
            }
          }, threads));
          awaitCommitWaiting();
          throw new SQLException("An I/O error occurred while sending to the backend.", "08006");
        }
        return invoke(c, m, args);
      };
      return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
          new Class<?>[] {Connection.class}, h);
    }

    /** Until the server is seen waiting for the advisory lock in the COMMIT (a condition, not a delay). */
    private void awaitCommitWaiting() throws SQLException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (System.nanoTime() < deadline) {
        try (Statement st = observer.createStatement();
            ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                + " AND NOT granted")) {
          rs.next();
          if (rs.getLong(1) > 0) {
            return;
          }
        }
        Thread.onSpinWait();
      }
      throw new IllegalStateException("the commit never reached the server");
    }
  }
}
