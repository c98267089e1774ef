package dev.idem.jdbc.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.zip.CRC32C;

/**
 * An append-only log of checksummed records with group commit: the one synchronous write on the
 * way to the first send. Writing a small record and forcing it costs about one fsync, while an H2
 * commit writes a copy-on-write chunk of tens of kilobytes per commit (see {@link LoggedStore}).
 *
 * <p>{@link #append} only buffers a record under a key (a row) and returns a ticket; whoever calls
 * {@link #awaitDurable} first writes everything buffered so far with one write and one
 * {@code fdatasync}, so that concurrent callers share it. A record buffered under a key replaces a
 * buffered, not yet written record of the same key (the row's later image makes the earlier one
 * useless), so an operation's claim, attempt and completion, written together with the next
 * begin, cost one record, not three. Records are encoded only when written. Written records get
 * consecutive log sequence numbers (LSNs). Without forcing ({@code syncToDisk} off), durable means
 * written to the OS, which survives kill -9 but not an OS crash.
 *
 * <p>File layout: a header of two {@value #SLOT}-byte slots, each a magic number, the LSN a cycle
 * starts at, and a CRC32C; the valid slot with the higher start LSN is the current one. Then
 * records: LSN (8 bytes), payload length (4), CRC32C over the three (4), payload. Once every record
 * is in the database, {@link #reset} starts a new cycle at the front of the same file, overwriting
 * in place (an overwrite is cheaper to force than an append that grows the file). It writes the
 * new start into the other slot, so a crash that tears that write leaves the previous cycle's
 * slot, whose records are all in the database already and are harmless to replay (whole row
 * images). Reading stops at the first record that is torn, fails its checksum, or does not carry
 * the next LSN, so the leftovers of earlier cycles behind the current one are never read.
 *
 * <p>The file is kept allocated (filled with zeros) ahead of the write position, so that a commit
 * overwrites blocks the file already has: forcing such a write flushes the data only, while an
 * append that grows the file also makes the file system commit its metadata journal, which on ext4
 * also flushes every other file's pending data (here: H2's). {@link #preallocate} does that ahead
 * of time, off the commit path, and forces the zeros there, so that a commit's fdatasync does not
 * write them; a commit that outruns it extends the file itself.
 *
 * <p>Thread-safe; {@link #reset} and {@link #close} need callers to have stopped appending.
 */
final class WriteAheadLog implements AutoCloseable {
  /** One header slot: a disk sector apart from the other, so that one torn write cannot hit both. */
  static final int SLOT = 4096;
  static final int HEADER = 2 * SLOT;
  private static final long MAGIC = 0x4944454d57414c31L; // "IDEMWAL1"
  private static final int RECORD_HEADER = 16;
  /** A length beyond this is garbage, not a record: the journal refuses request bodies far smaller. */
  private static final int MAX_PAYLOAD = 64 << 20;

  private final Path file;
  /** Replaced (under {@link #reopenLock}) when an interrupt closed it: see {@link #writeFully}. */
  private volatile FileChannel channel;
  private final Object reopenLock = new Object();
  private volatile boolean closing;
  private final Forcer forcer;

  private final Object bufferLock = new Object();
  /** Records buffered since the last commit, by key, each encoded when written. */
  private Map<Object, Supplier<byte[]>> pending = new LinkedHashMap<>(); // guarded by bufferLock
  private long lastTicket; // guarded by bufferLock
  /** Where the last commit encoded its records, reused: allocating one per commit cost more than the write. */
  private ByteBuffer spare = ByteBuffer.allocate(64 * 1024); // guarded by commitLock
  private long nextLsn; // guarded by commitLock
  /** When the oldest buffered record was appended (System.nanoTime), or -1 if none is buffered. */
  private long pendingSince = -1; // guarded by bufferLock
  /** Threads waiting for a commit that another thread is running. */
  private final Queue<Waiter> waiters = new ConcurrentLinkedQueue<>();
  /**
   * Why a commit failed, once one has: its records left the buffer and were not written, so no
   * later commit may report them durable. Null while every commit has succeeded.
   */
  private volatile Throwable failure;
  /** Wakes the waiters of a commit when its thread goes on to commit more (see {@link #awaitDurable}). */
  private final Unparker unparker;

  /** Held by the one thread that writes and forces; others wait and usually find their record done. */
  private final ReentrantLock commitLock = new ReentrantLock();
  /** Written under commitLock; volatile so that {@link #cycleBytes} and preallocation read it without taking it. */
  private volatile long writePosition;
  private volatile long durableTicket;
  /** Held while zeros are written past {@link #allocatedEnd}; commits only ever write below it. */
  private final ReentrantLock allocationLock = new ReentrantLock();
  private volatile long allocatedEnd;
  private static final int ALLOCATION_STEP = 1 << 20;
  /** The most commits one caller of {@link #awaitDurable} runs in a row for others (see there). */
  static final int MAX_COMMITS_PER_LEADER = 8;
  private final List<byte[]> recovered;
  private int currentSlot; // guarded by commitLock

  /**
   * What makes written records durable. {@link #FDATASYNC} forces them to the disk; {@link #NONE}
   * leaves them with the OS (they survive kill -9, not an OS crash). Tests wrap these to count or
   * hold forces.
   */
  interface Forcer {
    Forcer FDATASYNC = channel -> channel.force(false);
    Forcer NONE = channel -> { };

    void force(FileChannel channel) throws IOException;
  }

  private WriteAheadLog(Path file, FileChannel channel, Forcer forcer, long nextLsn, long writePosition,
      List<byte[]> recovered, int currentSlot) {
    this.file = file;
    this.channel = channel;
    this.forcer = forcer;
    this.nextLsn = nextLsn;
    this.writePosition = writePosition;
    this.recovered = recovered;
    this.currentSlot = currentSlot;
    this.allocatedEnd = Math.max(writePosition, HEADER);
    this.unparker = new Unparker("idem-journal-log-waker");
  }

  /**
   * Opens the log, creating it ({@code rw-------}) if missing, and reads the records of its current
   * cycle: {@link #recovered()}.
   *
   * @param forcer what {@link #awaitDurable} does after writing: {@link Forcer#FDATASYNC} or
   *     {@link Forcer#NONE}
   */
  static WriteAheadLog open(Path file, Forcer forcer) throws IOException {
    if (!Files.exists(file)) {
      try {
        Files.createFile(file, PosixFilePermissions.asFileAttribute(H2Files.FILE_PERMISSIONS));
      } catch (UnsupportedOperationException e) {
        Files.createFile(file);
      }
    }
    FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
    WriteAheadLog log = null;
    try {
      long size = channel.size();
      long[] slots = size >= HEADER ? new long[] {readSlot(channel, 0), readSlot(channel, 1)} : new long[] {0, 0};
      if (size >= HEADER && slots[0] == 0 && slots[1] == 0) {
        throw new IOException("the header of the journal's log " + file + " is unreadable; the log may hold"
            + " operations the database lacks, so the journal will not open without it (move the file away only"
            + " if the journal is known to be fully checkpointed)");
      }
      int currentSlot = slots[1] > slots[0] ? 1 : 0;
      long start = Math.max(1, slots[currentSlot]);
      List<byte[]> records = new ArrayList<>();
      long position = HEADER;
      long expected = start;
      ByteBuffer head = ByteBuffer.allocate(RECORD_HEADER);
      while (position + RECORD_HEADER <= size) {
        head.clear();
        readFully(channel, head, position);
        long lsn = head.getLong(0);
        int length = head.getInt(8);
        int crc = head.getInt(12);
        if (lsn != expected || length < 0 || length > MAX_PAYLOAD || position + RECORD_HEADER + length > size) {
          break;
        }
        ByteBuffer payload = ByteBuffer.allocate(length);
        readFully(channel, payload, position + RECORD_HEADER);
        if (crc(lsn, length, payload.array()) != crc) {
          break; // torn at the crash, or a leftover of an earlier cycle
        }
        records.add(payload.array());
        expected = lsn + 1;
        position += RECORD_HEADER + length;
      }
      log = new WriteAheadLog(file, channel, forcer, expected, position, records, currentSlot);
      log.allocatedEnd = Math.max(size, HEADER);
      if (size < HEADER) {
        log.writeSlot(currentSlot, start); // a new log (or one that crashed while being created: no records)
      }
      return log;
    } catch (IOException | RuntimeException e) {
      if (log != null) {
        log.unparker.close();
      }
      channel.close();
      throw e;
    }
  }

  /** The payloads of the records found at open, in LSN order; what the database may lack. */
  List<byte[]> recovered() {
    return recovered;
  }

  /**
   * Buffers a record under {@code key}, replacing a buffered record of the same key, and returns
   * its ticket: the record is durable once {@link #awaitDurable} of that ticket returns. The
   * supplier runs once, when the record is written, on the writing thread.
   */
  long append(Object key, Supplier<byte[]> payload) {
    synchronized (bufferLock) {
      pending.put(key, payload);
      if (pendingSince < 0) {
        pendingSince = System.nanoTime();
      }
      return ++lastTicket;
    }
  }

  /** The ticket of the last record appended, or 0 if none. */
  long lastAppended() {
    synchronized (bufferLock) {
      return lastTicket;
    }
  }

  /** How long the oldest record not yet written has waited, in nanoseconds; 0 if none waits. */
  long pendingNanos() {
    synchronized (bufferLock) {
      return pendingSince < 0 ? 0 : System.nanoTime() - pendingSince;
    }
  }

  /** Every record up to this ticket is durable (written, and forced unless the forcer is {@link Forcer#NONE}). */
  long durableTicket() {
    return durableTicket;
  }

  /** Bytes written in the current cycle: when to start a new one. */
  long cycleBytes() {
    return writePosition - HEADER;
  }

  /**
   * Returns once every record up to {@code ticket} is durable, writing and forcing everything
   * buffered so far if no other thread is doing it already.
   *
   * <p>Callers that find a commit running do not queue on its lock: they park. When a commit ends,
   * the committing thread unparks the waiters it made durable and, while others still wait, goes
   * on to commit their records itself, up to {@link #MAX_COMMITS_PER_LEADER} commits in all
   * (between them, an {@link Unparker} wakes the waiters made durable); then it unparks one waiter,
   * if any, to lead the next. A caller that takes the lock while others wait first yields its
   * core once, so that writers ready to run append to its commit. Queuing on the lock (or on a
   * monitor) handed it from waiter to waiter, one context switch each, and on 2 cores that convoy
   * cost more than the fsync; waking every waiter after each commit cost a context switch for each
   * one whose record was still pending. Handing every commit to a parked waiter left the disk idle while that waiter waited
   * for a core: with 32 writers, a commit started every 700 us or so for fsyncs of 200 to 300 us,
   * and a third of the CPU was idle.
   *
   * @throws IOException if the write or force of this record failed, or an earlier one did (then
   *     this record may have gone with it, and the log reports nothing durable any more)
   */
  void awaitDurable(long ticket) throws IOException {
    while (durableTicket < ticket) {
      failIfFailed();
      if (commitLock.tryLock()) {
        try {
          if (durableTicket < ticket) {
            failIfFailed();
            if (!waiters.isEmpty()) {
              // Other writers are active: let the runnable ones append (they find the lock held
              // and park) before this commit takes the buffer, so that one fdatasync serves more
              // of them. Each commit costs 80 to 100 us of kernel CPU here; with 32 writers on 2
              // cores this cut commits per operation from about 0.1 to 0.06. A lone writer never
              // has waiters, so it does not yield (a yield could hand its core to the applier).
              Thread.yield();
            }
            commit();
            try {
              for (int n = 1; n < MAX_COMMITS_PER_LEADER && othersWait(); n++) {
                wakeDurableWaiters();
                commit();
              }
            } catch (IOException | RuntimeException e) {
              // This caller's record is durable; the writers of the failed commit's records are
              // woken (releaseCommitLock) and see the failure themselves.
            }
          }
        } finally {
          releaseCommitLock();
        }
      } else {
        Waiter me = new Waiter(Thread.currentThread(), ticket);
        waiters.add(me);
        // Re-checked after enqueuing: a commit that ended before the add did not see this waiter.
        // An interrupt does not end the wait (a commit takes milliseconds, and a caller that gave
        // up could not know whether its record is durable); it is kept for the caller to see.
        boolean interrupted = false;
        while (!me.released && durableTicket < ticket && commitLock.isLocked()) {
          LockSupport.park(this);
          interrupted |= Thread.interrupted();
        }
        waiters.remove(me);
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  /** A thread parked in {@link #awaitDurable}, and the ticket it waits for. */
  private static final class Waiter {
    final Thread thread;
    final long ticket;
    volatile boolean released;

    Waiter(Thread thread, long ticket) {
      this.thread = thread;
      this.ticket = ticket;
    }
  }

  private void failIfFailed() throws IOException {
    Throwable f = failure;
    if (f != null) {
      throw new IOException("an earlier write of the log " + file + " failed, and records not yet durable were"
          + " lost with it: " + f, f);
    }
  }

  /** With commitLock held: whether a parked caller waits for a record that is not yet durable. */
  private boolean othersWait() {
    long durable = durableTicket;
    for (Waiter w : waiters) {
      if (w.ticket > durable) {
        return true;
      }
    }
    return false;
  }

  /** With commitLock held: has the waiters whose records are durable unparked, by {@link #unparker}. */
  private void wakeDurableWaiters() {
    long durable = durableTicket;
    boolean any = false;
    for (Iterator<Waiter> it = waiters.iterator(); it.hasNext(); ) {
      Waiter w = it.next();
      if (w.ticket <= durable) {
        it.remove();
        w.released = true;
        unparker.add(w.thread);
        any = true;
      }
    }
    if (any) {
      unparker.signal();
    }
  }

  /**
   * Releases commitLock, unparks the waiters whose records are durable, and one that still waits,
   * to commit next. Every holder of commitLock must end with this: a waiter that parked while the
   * lock was held would otherwise wait for a commit nobody runs. The others that still wait stay
   * parked: the next commit's release looks at them again.
   */
  private void releaseCommitLock() {
    commitLock.unlock();
    long durable = durableTicket;
    boolean everyone = failure != null; // no one will commit again: each must see the failure
    boolean nextLeaderChosen = false;
    for (Iterator<Waiter> it = waiters.iterator(); it.hasNext(); ) {
      Waiter w = it.next();
      if (everyone || w.ticket <= durable || !nextLeaderChosen) {
        nextLeaderChosen |= w.ticket > durable;
        it.remove();
        w.released = true;
        LockSupport.unpark(w.thread);
      }
    }
  }

  /**
   * With commitLock held: encodes everything buffered, writes it with one write, and forces it. If
   * that fails, the records it took are lost, so the log fails every later wait for a record not
   * yet durable (see {@link #failure}).
   */
  private void commit() throws IOException {
    Map<Object, Supplier<byte[]>> records;
    long last;
    synchronized (bufferLock) {
      records = pending;
      last = lastTicket;
      pending = new LinkedHashMap<>();
      pendingSince = -1;
    }
    try {
      write(records, last);
    } catch (IOException | RuntimeException | Error e) {
      failure = e;
      throw e;
    }
  }

  private void write(Map<Object, Supplier<byte[]>> records, long last) throws IOException {
    ByteBuffer batch = spare;
    batch.clear();
    for (Supplier<byte[]> r : records.values()) {
      byte[] payload = r.get();
      if (batch.remaining() < RECORD_HEADER + payload.length) {
        ByteBuffer bigger = ByteBuffer.allocate(Math.max(batch.capacity() * 2, batch.position() + RECORD_HEADER
            + payload.length));
        batch.flip();
        bigger.put(batch);
        batch = bigger;
      }
      long lsn = nextLsn++;
      batch.putLong(lsn).putInt(payload.length).putInt(crc(lsn, payload.length, payload)).put(payload);
    }
    batch.flip();
    if (writePosition + batch.remaining() > allocatedEnd) {
      preallocate(writePosition + batch.remaining() + ALLOCATION_STEP);
    }
    int length = batch.remaining();
    writeFully(batch, writePosition, true);
    writePosition += length;
    durableTicket = last;
    // A buffer grown for a burst is not kept: the next burst grows one again.
    spare = batch.capacity() > (4 << 20) ? ByteBuffer.allocate(64 * 1024) : batch;
  }

  /**
   * Once less than one allocation step is left allocated past the write position, allocates up to
   * two steps past it (see {@link #preallocate}): a mebibyte at a time, each with one force.
   */
  void preallocateAhead() throws IOException {
    long position = writePosition;
    if (allocatedEnd - position < ALLOCATION_STEP) {
      preallocate(position + 2L * ALLOCATION_STEP);
    }
  }

  /**
   * Fills the file with zeros up to at least {@code end} bytes, in steps, unless it is that long
   * already, and forces them. Safe to call while others commit: it writes only past
   * {@link #allocatedEnd}, and moves that mark only after the zeros are written and forced.
   *
   * <p>The force is why this runs ahead, off the commit path: an fdatasync writes every dirty page
   * of the file, so zeros left in the page cache made the next commit write a mebibyte of them
   * (with 32 writers, a commit's write and fdatasync took 710 to 860 us instead of 450 to 560).
   */
  void preallocate(long end) throws IOException {
    if (allocatedEnd >= end) {
      return;
    }
    // Held off for the whole allocation: each write or force of an interrupted thread would close
    // the channel under every other writer, and writeFully would reopen it once per step.
    boolean interrupted = Thread.interrupted();
    allocationLock.lock();
    try {
      if (allocatedEnd >= end) {
        return; // another thread allocated it meanwhile
      }
      ByteBuffer zeros = ByteBuffer.allocate(ALLOCATION_STEP);
      long at = allocatedEnd;
      while (at < end) {
        writeFully(zeros, at, false);
        at += ALLOCATION_STEP;
      }
      forceFully();
      allocatedEnd = at;
    } finally {
      allocationLock.unlock();
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Starts a new cycle at the front of the file: call only when every appended record is durable
   * and in the database, with appends stopped. The new header is forced before this returns, so a
   * crash cannot bring the old cycle back.
   */
  void reset() throws IOException {
    commitLock.lock();
    try {
      synchronized (bufferLock) {
        if (!pending.isEmpty()) {
          throw new IllegalStateException("reset of the log of " + file + " with records not yet written");
        }
      }
      int slot = 1 - currentSlot;
      writeSlot(slot, nextLsn);
      currentSlot = slot;
      writePosition = HEADER;
    } finally {
      releaseCommitLock();
    }
  }

  private void writeSlot(int slot, long startLsn) throws IOException {
    ByteBuffer h = ByteBuffer.allocate(20);
    h.putLong(MAGIC).putLong(startLsn);
    CRC32C c = new CRC32C();
    c.update(h.array(), 0, 16);
    h.putInt((int) c.getValue());
    h.flip();
    writeFully(h, (long) slot * SLOT, true);
  }

  /**
   * Writes all of {@code data} (from position 0) at {@code at}, and forces the file if asked.
   *
   * <p>An interrupt of the writing thread makes the JDK close the channel: left alone, one app
   * thread cancelled in the middle of a begin would break the journal for every other. So the
   * channel is reopened and the write repeated (it is the same bytes at the same place), and the
   * thread's interrupt status is restored afterwards. A thread whose write failed because another
   * thread's interrupt closed the channel retries on the reopened one.
   */
  private void writeFully(ByteBuffer data, long at, boolean force) throws IOException {
    boolean interrupted = false;
    try {
      while (true) {
        FileChannel ch = channel;
        try {
          data.position(0);
          while (data.hasRemaining()) {
            ch.write(data, at + data.position());
          }
          if (force) {
            forcer.force(ch);
          }
          return;
        } catch (ClosedChannelException e) {
          // Closed during this call (AsynchronousCloseException) or before it, by another
          // thread's interrupt: either way the channel is reopened, unless the log is closing.
          if (closing) {
            throw e;
          }
          if (e instanceof ClosedByInterruptException) {
            interrupted = true;
            Thread.interrupted(); // clear it, or the retry is interrupted at once
          }
          reopenIfClosed(ch);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Forces the file, on a reopened channel if an interrupt closed it (see {@link #writeFully}). */
  private void forceFully() throws IOException {
    writeFully(ByteBuffer.allocate(0), 0, true);
  }

  private void reopenIfClosed(FileChannel failed) throws IOException {
    synchronized (reopenLock) {
      if (channel == failed && !failed.isOpen() && !closing) {
        channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
      }
    }
  }

  /** The start LSN in a header slot, or 0 if the slot is not valid. */
  private static long readSlot(FileChannel channel, int slot) throws IOException {
    ByteBuffer h = ByteBuffer.allocate(20);
    readFully(channel, h, (long) slot * SLOT);
    CRC32C c = new CRC32C();
    c.update(h.array(), 0, 16);
    if (h.getLong(0) != MAGIC || h.getInt(16) != (int) c.getValue() || h.getLong(8) < 1) {
      return 0;
    }
    return h.getLong(8);
  }

  private static void readFully(FileChannel channel, ByteBuffer b, long position) throws IOException {
    long p = position;
    while (b.hasRemaining()) {
      int n = channel.read(b, p);
      if (n < 0) {
        throw new IOException("unexpected end of the log at " + p);
      }
      p += n;
    }
  }

  private static int crc(long lsn, int length, byte[] payload) {
    CRC32C c = new CRC32C();
    ByteBuffer h = ByteBuffer.allocate(12).putLong(lsn).putInt(length);
    c.update(h.array(), 0, 12);
    c.update(payload, 0, payload.length);
    return (int) c.getValue();
  }

  @Override
  public void close() throws IOException {
    unparker.close();
    synchronized (reopenLock) {
      closing = true;
      channel.close();
    }
  }

  @Override
  public String toString() {
    return "WriteAheadLog[" + file + "]";
  }
}
