package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The log's file format, what a reopen reads back, and what it must never read back. */
class WriteAheadLogTest {
  @TempDir
  Path dir;

  private Path file() {
    return dir.resolve("idem-journal.wal");
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static List<String> texts(List<byte[]> payloads) {
    List<String> result = new ArrayList<>();
    payloads.forEach(p -> result.add(new String(p, StandardCharsets.UTF_8)));
    return result;
  }

  /** Appends one record per key and makes them durable. */
  private static void write(WriteAheadLog log, String... payloads) throws IOException {
    long last = 0;
    for (int i = 0; i < payloads.length; i++) {
      byte[] p = bytes(payloads[i]);
      last = log.append("key-" + i + "-" + payloads[i], () -> p);
    }
    log.awaitDurable(last);
  }

  @Test
  void durableRecordsAreReadBackInOrderAfterReopen() throws Exception {
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      assertTrue(log.recovered().isEmpty());
      write(log, "a", "b");
      write(log, "c");
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      assertEquals(List.of("a", "b", "c"), texts(log.recovered()));
    }
  }

  @Test
  void aLaterRecordOfTheSameKeyReplacesOneNotYetWrittenButNotOneAlreadyWritten() throws Exception {
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      log.append("row-1", () -> bytes("claim"));
      log.append("row-2", () -> bytes("other"));
      long t = log.append("row-1", () -> bytes("completion"));
      log.awaitDurable(t);
      log.awaitDurable(log.append("row-1", () -> bytes("after the commit")));
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      assertEquals(List.of("completion", "other", "after the commit"), texts(log.recovered()));
    }
  }

  @Test
  void aRecordIsEncodedOnlyWhenWrittenAndOnlyIfNotReplaced() throws Exception {
    List<String> encoded = new ArrayList<>();
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      log.append("row", () -> {
        encoded.add("first");
        return bytes("first");
      });
      long t = log.append("row", () -> {
        encoded.add("second");
        return bytes("second");
      });
      assertEquals(List.of(), encoded, "nothing is encoded at append");
      log.awaitDurable(t);
    }
    assertEquals(List.of("second"), encoded);
  }

  @Test
  void aTornLastRecordEndsTheLogAndTheRecordsBeforeItSurvive() throws Exception {
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      write(log, "a", "b", "a longer record that the crash tears in two");
    }
    long size = sizeOfRecords(List.of("a", "b", "a longer record that the crash tears in two"));
    try (FileChannel ch = FileChannel.open(file(), StandardOpenOption.WRITE)) {
      ch.truncate(WriteAheadLog.HEADER + size - 10); // the crash cut the last record short
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      assertEquals(List.of("a", "b"), texts(log.recovered()));
    }
  }

  @Test
  void aRecordWhoseChecksumFailsEndsTheLog() throws Exception {
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      write(log, "a", "b", "c");
    }
    // Flip one payload byte of "b": its CRC no longer matches, so it and everything after it go.
    long bAt = WriteAheadLog.HEADER + sizeOfRecords(List.of("a")) + 16;
    try (FileChannel ch = FileChannel.open(file(), StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(bytes("X")), bAt);
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      assertEquals(List.of("a"), texts(log.recovered()));
    }
  }

  @Test
  void aResetCycleIsNeverReadBackAndLeftoversBehindTheNewCycleAreIgnored() throws Exception {
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      write(log, "old-1", "old-2", "old-3", "old-4");
      log.reset(); // everything so far is in the database
      write(log, "new-1"); // overwrites the front; old-2..4 stay behind it in the file
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      assertEquals(List.of("new-1"), texts(log.recovered()));
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      log.reset();
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      assertEquals(List.of(), texts(log.recovered()), "a reset with nothing after it leaves nothing to replay");
    }
  }

  @Test
  void aTornHeaderWriteFallsBackToThePreviousCycleInsteadOfLosingOrResurrectingAnything() throws Exception {
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      write(log, "cycle-1");
      log.reset(); // the new start goes to slot 1; slot 0 keeps cycle 1's start
    }
    // The crash tore the write of slot 1: the log must fall back to slot 0, whose records (already
    // in the database when the reset began) are harmless to replay.
    try (FileChannel ch = FileChannel.open(file(), StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3}), WriteAheadLog.SLOT + 9);
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      assertEquals(List.of("cycle-1"), texts(log.recovered()));
    }
  }

  @Test
  void aLogWhoseHeaderIsUnreadableIsRefusedRatherThanTreatedAsEmpty() throws Exception {
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      write(log, "a");
    }
    try (FileChannel ch = FileChannel.open(file(), StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(new byte[20]), 0);
    }
    IOException e = assertThrows(IOException.class, () -> WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC));
    assertTrue(e.getMessage().contains("unreadable"), e.getMessage());
  }

  @Test
  void anInterruptedWriterStillMakesItsRecordDurableAndTheLogStaysUsable() throws Exception {
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      long t = log.append("row-1", () -> bytes("written by an interrupted thread"));
      Thread.currentThread().interrupt(); // the JDK closes a channel that an interrupted thread writes to
      try {
        log.awaitDurable(t);
      } finally {
        assertTrue(Thread.interrupted(), "the caller's interrupt status is kept for it to see");
      }
      write(log, "after"); // the log reopened its file and goes on
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      assertEquals(List.of("written by an interrupted thread", "after"), texts(log.recovered()));
    }
  }

  @Test
  void preallocatedZerosAreForcedAheadSoThatTheNextCommitForcesOnlyItsOwnRecords() throws Exception {
    AtomicInteger forces = new AtomicInteger();
    WriteAheadLog.Forcer counting = channel -> {
      forces.incrementAndGet();
      channel.force(false);
    };
    try (WriteAheadLog log = WriteAheadLog.open(file(), counting)) {
      int before = forces.get();
      log.preallocate(WriteAheadLog.HEADER + (3L << 20));
      // An fdatasync writes every dirty page of the file: zeros left unforced would be written by
      // the next commit's force, on the caller's path.
      assertEquals(before + 1, forces.get(), "the preallocating thread forces its zeros");
      long size = Files.size(file());
      assertTrue(size >= WriteAheadLog.HEADER + (3L << 20), "the zeros are written: " + size);
      write(log, "after the zeros");
      assertEquals(before + 2, forces.get(), "the commit forces once and does not preallocate again");
      assertEquals(size, Files.size(file()), "the commit wrote inside the preallocated zeros");
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      assertEquals(List.of("after the zeros"), texts(log.recovered()), "the zeros behind the record end the log");
    }
  }

  @Test
  void anInterruptedPreallocationStillForcesItsZerosAndTheLogStaysUsable() throws Exception {
    AtomicInteger forces = new AtomicInteger();
    WriteAheadLog.Forcer counting = channel -> {
      channel.force(false); // throws if the interrupt closed the channel; counted once it succeeds
      forces.incrementAndGet();
    };
    try (WriteAheadLog log = WriteAheadLog.open(file(), counting)) {
      int before = forces.get();
      Thread.currentThread().interrupt(); // the JDK closes a channel that an interrupted thread writes to
      try {
        log.preallocate(WriteAheadLog.HEADER + (2L << 20));
      } finally {
        assertTrue(Thread.interrupted(), "the interrupt status is kept");
      }
      assertEquals(before + 1, forces.get(), "the zeros were forced on the reopened channel");
      assertTrue(Files.size(file()) >= WriteAheadLog.HEADER + (2L << 20));
      write(log, "after");
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      assertEquals(List.of("after"), texts(log.recovered()));
    }
  }

  /**
   * A thread that commits goes on committing for the threads that wait meanwhile, rather than
   * handing each commit to a parked one, and those it made durable return while it commits more.
   */
  @Test
  void theCommittingThreadCommitsForThoseWaitingAndWakesThoseItMadeDurableMeanwhile() throws Exception {
    BlockingQueue<Thread> forcing = new LinkedBlockingQueue<>();
    Semaphore proceed = new Semaphore(0);
    AtomicBoolean gated = new AtomicBoolean();
    WriteAheadLog.Forcer forcer = channel -> {
      if (gated.get()) {
        forcing.add(Thread.currentThread());
        proceed.acquireUninterruptibly();
      }
    };
    try (WriteAheadLog log = WriteAheadLog.open(file(), forcer)) {
      log.preallocateAhead(); // its forces are not the commits this test follows
      gated.set(true);
      Thread a = writer(log, "a");
      assertEquals(a, forcing.poll(10, TimeUnit.SECONDS), "a forces its own record");
      Thread b = writer(log, "b");
      LogThreads.awaitParked(List.of(b));
      proceed.release();
      assertEquals(a, forcing.poll(10, TimeUnit.SECONDS), "a goes on to force b's record");
      Thread c = writer(log, "c");
      LogThreads.awaitParked(List.of(c));
      proceed.release(); // b's record is durable
      assertEquals(a, forcing.poll(10, TimeUnit.SECONDS), "a goes on to force c's record");
      b.join(10_000);
      assertFalse(b.isAlive(), "b returns while a still forces c's record");
      assertTrue(a.isAlive() && c.isAlive());
      proceed.release();
      for (Thread t : List.of(a, c)) {
        t.join(10_000);
        assertFalse(t.isAlive(), t.getName());
      }
      assertEquals(null, forcing.poll(), "three forces in all");
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.NONE)) {
      assertEquals(List.of("a", "b", "c"), texts(log.recovered()));
    }
  }

  /**
   * A record that went out with a failed write is never reported durable, even when a later write
   * succeeds: the failure took it out of the buffer, and a later commit must not claim it.
   */
  @Test
  void afterAFailedWriteNoRecordItHeldIsReportedDurable() throws Exception {
    AtomicBoolean fail = new AtomicBoolean();
    WriteAheadLog.Forcer forcer = channel -> {
      if (fail.getAndSet(false)) {
        throw new IOException("simulated: the disk refused the write");
      }
    };
    try (WriteAheadLog log = WriteAheadLog.open(file(), forcer)) {
      log.preallocateAhead();
      long durable = log.append("kept", () -> bytes("kept"));
      log.awaitDurable(durable);
      long other = log.append("other", () -> bytes("other")); // buffered, not yet waited for
      long mine = log.append("mine", () -> bytes("mine"));
      fail.set(true);
      assertThrows(IOException.class, () -> log.awaitDurable(mine));
      long later = log.append("later", () -> bytes("later"));
      IOException e = assertThrows(IOException.class, () -> log.awaitDurable(other),
          "'other' went out with the failed write; the next force would succeed, but must not vouch for it");
      assertTrue(e.getMessage().contains("failed"), e.getMessage());
      assertThrows(IOException.class, () -> log.awaitDurable(later));
      log.awaitDurable(durable); // durable before the failure: still fine to wait for
    }
  }

  /** Writers parked behind a commit that fails all see the failure; none waits for a commit no one will run. */
  @Test
  void everyWriterWaitingWhenACommitFailsSeesTheFailure() throws Exception {
    CountDownLatch inForce = new CountDownLatch(1);
    CountDownLatch fail = new CountDownLatch(1);
    AtomicBoolean gated = new AtomicBoolean();
    WriteAheadLog.Forcer forcer = channel -> {
      if (gated.getAndSet(false)) {
        inForce.countDown();
        try {
          fail.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        throw new IOException("simulated: the disk failed");
      }
    };
    try (WriteAheadLog log = WriteAheadLog.open(file(), forcer)) {
      log.preallocateAhead();
      gated.set(true);
      List<Future<?>> writers = new ArrayList<>();
      ExecutorService pool = Executors.newFixedThreadPool(3);
      try {
        writers.add(pool.submit(() -> {
          log.awaitDurable(log.append("a", () -> bytes("a")));
          return null;
        }));
        assertTrue(inForce.await(10, TimeUnit.SECONDS));
        List<Thread> parked = new ArrayList<>();
        for (String p : List.of("b", "c")) {
          CountDownLatch started = new CountDownLatch(1);
          Thread[] self = new Thread[1];
          writers.add(pool.submit(() -> {
            self[0] = Thread.currentThread();
            started.countDown();
            log.awaitDurable(log.append(p, () -> bytes(p)));
            return null;
          }));
          assertTrue(started.await(10, TimeUnit.SECONDS));
          parked.add(self[0]);
        }
        LogThreads.awaitParked(parked);
        fail.countDown();
        for (Future<?> w : writers) {
          java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
              () -> w.get(10, TimeUnit.SECONDS));
          assertTrue(e.getCause() instanceof IOException, String.valueOf(e.getCause()));
        }
      } finally {
        pool.shutdownNow();
      }
    }
  }

  /** A thread that appends {@code payload} and waits for it to be durable. */
  private static Thread writer(WriteAheadLog log, String payload) {
    Thread t = new Thread(() -> {
      try {
        log.awaitDurable(log.append(payload, () -> bytes(payload)));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, "writer-" + payload);
    t.start();
    return t;
  }

  @Test
  void aNewLogIsOwnerOnly() throws Exception {
    WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC).close();
    assertEquals("rw-------",
        java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(file())));
  }

  @Test
  void concurrentWritersAllBecomeDurable() throws Exception {
    int threads = 16;
    int each = 50;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.NONE)) {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        done.add(pool.submit(() -> {
          start.await();
          for (int i = 0; i < each; i++) {
            byte[] p = bytes(thread + ":" + i);
            log.awaitDurable(log.append(thread + ":" + i, () -> p));
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    try (WriteAheadLog log = WriteAheadLog.open(file(), WriteAheadLog.Forcer.FDATASYNC)) {
      Set<String> read = new HashSet<>(texts(log.recovered()));
      assertEquals(threads * each, read.size());
      for (int t = 0; t < threads; t++) {
        for (int i = 0; i < each; i++) {
          assertTrue(read.contains(t + ":" + i), t + ":" + i);
        }
      }
    }
  }

  /** Bytes the records of these payloads take after the header (16-byte record headers). */
  private static long sizeOfRecords(List<String> payloads) {
    long n = 0;
    for (String p : payloads) {
      n += 16 + bytes(p).length;
    }
    return n;
  }
}
