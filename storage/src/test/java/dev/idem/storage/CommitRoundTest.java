package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How {@link SingleConnectionStore} runs its callers' units and commit rounds (issue 28, P3): the
 * lock holder runs the units queued behind it, a caller is woken once, an interrupted caller does
 * not break the store, and, under a mix of every kind of call from many threads, no SYNC write or
 * flush returns before the disk sync that covers it has ended.
 */
class CommitRoundTest {
  @TempDir
  Path dir;

  @Test
  void unitsQueuedBehindTheLockRunOnTheHoldersThreadWithoutTheLockChangingHands() throws Exception {
    try (SingleConnectionStore store = store(plain(), null)) {
      store.write(Durability.SYNC, null, s -> s.connection().createStatement().executeUpdate("CREATE TABLE t(x)"));
      CountDownLatch holding = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      AtomicReference<Thread> holder = new AtomicReference<>();
      ExecutorService pool = Executors.newFixedThreadPool(9);
      try {
        Future<?> first = pool.submit(() -> store.write(Durability.DEFERRED, 0, s -> {
          holder.set(Thread.currentThread());
          holding.countDown();
          try {
            assertTrue(release.await(10, TimeUnit.SECONDS));
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
          return insert(s, 0);
        }));
        assertTrue(holding.await(10, TimeUnit.SECONDS));
        Map<Integer, Thread> ranOn = new ConcurrentHashMap<>();
        List<Thread> callers = new CopyOnWriteArrayList<>();
        List<Future<?>> queued = new ArrayList<>();
        for (int i = 1; i <= 8; i++) {
          int id = i;
          queued.add(pool.submit(() -> {
            callers.add(Thread.currentThread());
            return store.write(Durability.DEFERRED, id, s -> {
              ranOn.put(id, Thread.currentThread());
              return insert(s, id);
            });
          }));
        }
        // Every caller has handed its unit over and parked before the holder lets go.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while ((callers.size() < 8 || callers.stream().anyMatch(t -> t.getState() != Thread.State.WAITING))
            && System.nanoTime() < deadline) {
          Thread.onSpinWait();
        }
        release.countDown();
        first.get(10, TimeUnit.SECONDS);
        for (Future<?> f : queued) {
          f.get(10, TimeUnit.SECONDS);
        }
        assertEquals(8, ranOn.size());
        ranOn.forEach((id, thread) -> assertEquals(holder.get(), thread, "unit " + id + " waited for the lock to be"
            + " handed to its own thread instead of being run by the holder"));
      } finally {
        pool.shutdownNow();
      }
      assertEquals(9, (int) store.read(null, s -> count(s.connection())));
    }
  }

  @Test
  void aCallerInterruptedBeforeItsDurableWriteCommitsItAndLeavesTheStoreUsable() throws Exception {
    try (SingleConnectionStore store = store(plain(), DiskSync.ofWal(dir.resolve("j.db-wal")))) {
      store.write(Durability.SYNC, null, s -> s.connection().createStatement().executeUpdate("CREATE TABLE t(x)"));
      Thread.currentThread().interrupt();
      try {
        store.write(Durability.SYNC, 1, s -> insert(s, 1));
        assertTrue(Thread.currentThread().isInterrupted(), "the caller's interrupt is kept for it");
      } finally {
        Thread.interrupted();
      }
      // A disk sync on an interrupted thread closed the -wal file's channel: the store was broken.
      assertFalse(store.broken(), "an interrupted caller broke the store for everyone");
      store.write(Durability.SYNC, 2, s -> insert(s, 2));
      assertEquals(2, (int) store.read(null, s -> count(s.connection())));
    }
  }

  @Test
  void underEveryKindOfCallFromManyThreadsNoDurableWriteReturnsBeforeItsDiskSyncEnded() throws Exception {
    AtomicLong ticket = new AtomicLong();
    AtomicLong committedTicket = new AtomicLong();
    AtomicLong syncedTicket = new AtomicLong();
    Connection real = plain();
    Connection counting = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
        new Class<?>[] {Connection.class}, (proxy, method, args) -> {
          try {
            Object result = method.invoke(real, args);
            if (method.getName().equals("commit")) {
              // Under the store's statement lock, as every unit's work: no ticket is taken meanwhile.
              committedTicket.set(ticket.get());
            }
            return result;
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    DiskSync wal = DiskSync.ofWal(dir.resolve("j.db-wal"));
    DiskSync recording = new DiskSync() {
      @Override
      public void sync() throws java.sql.SQLException, java.io.IOException {
        long covered = committedTicket.get();
        wal.sync();
        syncedTicket.accumulateAndGet(covered, Math::max);
      }

      @Override
      public void close() throws java.sql.SQLException, java.io.IOException {
        wal.close();
      }
    };
    int threads = 16;
    int callsPerThread = 400;
    try (SingleConnectionStore store = store(counting, recording)) {
      store.write(Durability.SYNC, null, s -> s.connection().createStatement().executeUpdate(
          "CREATE TABLE t(x INTEGER PRIMARY KEY)"));
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          int thread = t;
          all.add(CompletableFuture.runAsync(() -> {
            SplittableRandom random = new SplittableRandom(thread);
            try {
              for (int i = 0; i < callsPerThread; i++) {
                int id = thread * callsPerThread + i;
                int kind = random.nextInt(5);
                if (kind == 4) {
                  long before = ticket.get();
                  store.flush();
                  assertTrue(syncedTicket.get() >= before, "a flush returned before its sync ended");
                  continue;
                }
                long[] mine = new long[1];
                // Writes take tickets (under the statement lock); reads commit nothing.
                SqlWork<Integer> work = s -> {
                  if (kind == 3) {
                    return count(s.connection());
                  }
                  mine[0] = ticket.incrementAndGet();
                  return insert(s, id);
                };
                if (kind == 3) {
                  store.read(null, work);
                } else {
                  Durability durability = kind == 2 ? Durability.DEFERRED : Durability.SYNC;
                  store.write(durability, kind == 1 ? null : id, work);
                  if (durability == Durability.SYNC) {
                    assertTrue(syncedTicket.get() >= mine[0], "a SYNC write returned before the sync of its commit");
                  }
                }
              }
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          }, pool));
        }
        CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(120, TimeUnit.SECONDS);
      } finally {
        pool.shutdownNow();
      }
      store.flush();
      assertFalse(store.broken());
      assertEquals(ticket.get(), syncedTicket.get(), "every write is on the disk after the last flush");
      assertEquals(ticket.get(), (long) store.read(null, s -> count(s.connection())));
    }
  }

  private SingleConnectionStore store(Connection connection, DiskSync sync) throws Exception {
    return new SingleConnectionStore("test store", "j", connection, sync, Duration.ofMillis(5), false);
  }

  private Connection plain() throws Exception {
    Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("j.db"));
    try (Statement st = c.createStatement()) {
      st.execute("PRAGMA journal_mode=WAL");
      st.execute("PRAGMA synchronous=NORMAL");
    }
    return c;
  }

  private static int insert(SqlSession s, int id) throws java.sql.SQLException {
    PreparedStatement p = s.prepare("INSERT INTO t (x) VALUES (?)");
    p.setInt(1, id);
    return p.executeUpdate();
  }

  private static int count(Connection c) throws java.sql.SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM t")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
