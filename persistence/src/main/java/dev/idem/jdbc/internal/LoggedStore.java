package dev.idem.jdbc.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import dev.idem.core.OperationId;
import dev.idem.jdbc.internal.OperationTable.RowKey;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Store} of an embedded H2 journal in its own directory: a {@link WriteAheadLog} in
 * front of the database.
 *
 * <p>Why: an H2 commit writes a copy-on-write chunk of tens of kilobytes and costs several times an
 * fsync in CPU, one commit at a time, however many connections run statements. So the hot path
 * does not touch the database except to look up a row it has not seen. A unit of work that names
 * its row reads and writes whole row images ({@link OverlayTable}): its changes are appended to
 * the log and kept in memory (the overlay), and a SYNC unit returns once the log is forced (group
 * commit). A background thread, the applier, writes the logged rows to H2 in batches (the last
 * image of each row only) and then drops them from the overlay; a row missing from the overlay is
 * read from H2.
 *
 * <p>Units of different rows run in parallel: each holds the lock of its row's stripe, and the
 * shared side of the database lock. Work that names no row (page queries, purge, quarantine)
 * holds the exclusive side, forces the log and applies every logged row first, so it sees
 * everything on the database; most of the backlog is applied before it takes the exclusive side,
 * while writers still run. Writes of that kind also sync the database and start a new log
 * cycle, so that replay can never bring back a row they deleted.
 *
 * <p>When the log's current cycle passes {@link #CHECKPOINT_BYTES}, and at close, the store
 * applies everything, syncs the H2 file, and restarts the log at its front. At open, the records of
 * the current cycle are written to H2 first (they are whole images, so applying one twice is
 * harmless). No unit returns before every SYNC write of its row is durable: a claim of an
 * operation whose begin is not yet forced waits for it, as on {@link SingleConnectionStore}.
 *
 * <p>If writing the log or the database fails, the store is broken: every later call throws, and
 * reopening replays the log.
 */
public final class LoggedStore implements Store {
  /** A log cycle longer than this starts a checkpoint: 16 MiB, about ten thousand operations. */
  static final long CHECKPOINT_BYTES = 16L << 20;
  /**
   * The most logged rows written to H2 in one transaction (about 1,000 operations: each has four
   * logged rows, and a batch writes the last image of each row). The applier also waits for this
   * many, or for {@link #APPLY_MAX_DELAY_NANOS}, before it writes. Why not more: H2 stores its
   * pages whenever some 19 MB of changes are unsaved, also in the middle of a transaction, and a
   * row stored before its commit is serialized twice (as uncommitted, then as committed), with its
   * undo-log entry. Measured with time-ordered keys (UUIDv7), one writer, syncToDisk off: the
   * applier spent 17 to 19.5 us per operation with batches of 4,000 rows, 19 to 20 with 1,000 and
   * 2,000, and 22 to 25 with 16,000 (the previous size, chosen when keys were random UUIDv4 and
   * every insert dirtied a random leaf, so that bigger batches shared more rewritten leaves).
   */
  private static final int APPLY_BATCH = 4_000;
  private static final long APPLY_MAX_DELAY_NANOS = TimeUnit.SECONDS.toNanos(1);
  /**
   * Logged rows not yet in H2 beyond which writers wait for the applier: bounds the overlay, at
   * about 12,000 operations (some 20 MB with small requests).
   */
  private static final int MAX_BACKLOG = 48_000;
  /** The applier wakes at least this often, to apply what the log has made durable. */
  private static final long APPLY_INTERVAL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
  private static final int STRIPES = 64;
  /** Logged rows left for the exclusive section of a checkpoint, or of work on the whole database. */
  private static final int EXCLUSIVE_TAIL = 1_000;
  /**
   * The most batches applied before that exclusive section, while writers still log: four full
   * backlogs' worth. A bound, not a target: writers may log as fast as the applier writes, and
   * then the exclusive section applies whatever is left.
   */
  private static final int MAX_PRE_APPLY_BATCHES = 4 * MAX_BACKLOG / APPLY_BATCH;

  private static final Logger LOG = LoggerFactory.getLogger(LoggedStore.class);

  private final String name;
  private final List<Connection> readers;
  private final Connection writer;
  private final DiskSync diskSync;
  private final WriteAheadLog log;
  private final long deferredCommitNanos;
  private final long checkpointBytes;
  private final OverlayTable table = new OverlayTable();
  private final OperationTable sql = new OperationTable(Dialect.H2);
  /**
   * Statements of the reader connections, for rows not in the overlay (every begin of a new key
   * looks once); a unit takes one and gives it back. More than one, so that lookups of units on
   * different rows run in parallel: one shared connection was where 32 threads queued.
   */
  private final BlockingQueue<CachedStatements> readerSessions;
  private final List<CachedStatements> allReaderSessions = new ArrayList<>();
  /** Statements of the writer connection; used with {@link #applyLock} held. */
  private final CachedStatements writerSession;

  /** Shared by units that name a row; exclusive for work on the whole database, checkpoints, close. */
  private final ReentrantReadWriteLock databaseLock = new ReentrantReadWriteLock();
  private final ReentrantLock[] rowLocks = new ReentrantLock[STRIPES];
  private final Map<RowKey, Logged> overlay = new ConcurrentHashMap<>();
  /** The identities H2 may hold: a begin of a key it has never seen skips the H2 look-up. */
  private volatile KeyFilter keys;
  /** Logged rows not yet applied, in log order per row. */
  private final Queue<Logged> backlog = new ConcurrentLinkedQueue<>();
  private final AtomicInteger backlogSize = new AtomicInteger();
  /** Rows with a SYNC write that may not be durable yet, and that write's ticket. */
  private final Map<Object, Long> unsyncedRows = new ConcurrentHashMap<>();
  private volatile boolean closed;

  /** Held while writing to H2 (the applier, checkpoints, work that names no row); taken before databaseLock. */
  private final ReentrantLock applyLock = new ReentrantLock();
  /** Wakes the applier, and writers waiting for it to shrink the backlog. */
  private final ReentrantLock signalLock = new ReentrantLock();
  private final Condition backlogGrew = signalLock.newCondition();
  private final Condition backlogShrank = signalLock.newCondition();
  /**
   * Whether the applier waits on backlogGrew: writers signal it only then. With batches of a few
   * thousand rows the backlog is above one batch most of the time under load, and every write
   * taking signalLock to signal an applier that is not waiting was wasted lock traffic.
   */
  private volatile boolean applierWaiting;
  private volatile Throwable broken;
  private final Thread applier;

  /**
   * A logged row image, its log ticket, when it was logged (System.nanoTime), and whether its unit
   * created the row (then it is in neither the overlay nor H2 before this image is applied).
   */
  private record Logged(RowKey key, RawRow row, long ticket, long loggedAt, boolean created) {
  }

  private LoggedStore(String name, Connection writer, List<Connection> readers, DiskSync diskSync, WriteAheadLog log,
      Duration deferredCommitInterval, long checkpointBytes) throws SQLException {
    this.name = name;
    this.writer = writer;
    this.readers = List.copyOf(readers);
    this.diskSync = diskSync;
    this.log = log;
    this.deferredCommitNanos = deferredCommitInterval.toNanos();
    this.checkpointBytes = checkpointBytes;
    writer.setAutoCommit(false);
    this.readerSessions = new ArrayBlockingQueue<>(readers.size());
    for (Connection reader : readers) {
      reader.setAutoCommit(true);
      CachedStatements session = new CachedStatements(reader);
      allReaderSessions.add(session);
      readerSessions.add(session);
    }
    this.writerSession = new CachedStatements(writer);
    for (int i = 0; i < STRIPES; i++) {
      rowLocks[i] = new ReentrantLock();
    }
    this.applier = new Thread(this::applyLoop, "idem-journal-applier");
    applier.setDaemon(true);
  }

  /**
   * Opens the log in {@code logFile}, writes its records to the database (a crash may have left
   * them only in the log), and starts the applier.
   *
   * @param writer the connection for every write to H2 (migrated already); switched to manual commit
   * @param readers more connections, for reads of rows that are not in the overlay
   * @param diskSync what forces the H2 file before the log is restarted, or null when the journal
   *     does not sync to disk (then the log is not forced either)
   */
  public static LoggedStore open(String name, Connection writer, List<Connection> readers, DiskSync diskSync,
      Path logFile, Duration deferredCommitInterval) throws SQLException, IOException {
    return open(name, writer, readers, diskSync, logFile, deferredCommitInterval, CHECKPOINT_BYTES,
        diskSync != null ? WriteAheadLog.Forcer.FDATASYNC : WriteAheadLog.Forcer.NONE);
  }

  /**
   * As {@link #open(String, Connection, List, DiskSync, Path, Duration)}, with another cycle length
   * and forcer (tests).
   */
  static LoggedStore open(String name, Connection writer, List<Connection> readers, DiskSync diskSync, Path logFile,
      Duration deferredCommitInterval, long checkpointBytes, WriteAheadLog.Forcer forcer)
      throws SQLException, IOException {
    WriteAheadLog log = WriteAheadLog.open(logFile, forcer);
    try {
      LoggedStore store = new LoggedStore(name, writer, readers, diskSync, log, deferredCommitInterval,
          checkpointBytes);
      store.recover();
      store.loadKeys();
      // Allocated (and forced) before the first begin, not by the applier while begins run: a new
      // log's first commits then force only their own records.
      log.preallocateAhead();
      store.applier.start();
      return store;
    } catch (SQLException | IOException | RuntimeException e) {
      log.close();
      throw e;
    }
  }

  private void recover() throws SQLException, IOException {
    List<byte[]> records = log.recovered();
    if (records.isEmpty()) {
      return;
    }
    Map<RowKey, RawRow> latest = new LinkedHashMap<>();
    for (byte[] payload : records) {
      RawRow row = RowImage.decode(payload);
      latest.put(new RowKey(row.scope(), row.operation(), row.key()), row);
    }
    List<RawRow> rows = new ArrayList<>(latest.values());
    for (int i = 0; i < rows.size(); i += APPLY_BATCH) {
      List<RawRow> batch = rows.subList(i, Math.min(rows.size(), i + APPLY_BATCH));
      try {
        sql.mergeAll(writerSession, batch);
      } catch (SQLException e) {
        if (e.getSQLState() == null || !e.getSQLState().startsWith("22")) {
          throw e;
        }
        mergeOneByOne(batch);
      }
    }
    writer.commit();
    syncDatabase();
    log.reset();
    LOG.info("Idem journal {}: replayed {} logged writes of {} operations into the database", name, records.size(),
        rows.size());
  }

  /**
   * Replays rows one at a time after a batch hit a value H2 refuses (a log written before the
   * column checks): each row that fits is kept, and each that does not is reported and left out,
   * so that one bad row cannot keep the journal from opening. (H2 rolls back only the failed
   * statement, not the transaction.)
   */
  private void mergeOneByOne(List<RawRow> batch) throws SQLException {
    for (RawRow row : batch) {
      try {
        sql.mergeAll(writerSession, List.of(row));
      } catch (SQLException e) {
        if (e.getSQLState() == null || !e.getSQLState().startsWith("22")) {
          throw e;
        }
        LOG.error("Idem journal {}: the logged operation {} cannot be written to the database and is left out"
            + " of it ({}); its last state is lost", name, row.idText(), JournalErrors.diagnose(e));
      }
    }
  }

  /**
   * Fills the key filter with every identity in H2, sized for twice as many before it grows: one
   * scan of the primary key at open (about a second per million rows).
   */
  private void loadKeys() throws SQLException {
    KeyFilter filter = new KeyFilter(2 * sql.countAll(writerSession));
    sql.forEachKey(writerSession, filter::add);
    writer.commit();
    keys = filter;
  }

  /** The table whose single-row methods act on this store's row images. */
  @Override
  public OperationTable table(Dialect dialect) {
    return table;
  }

  @Override
  public <T> T read(Object row, SqlWork<T> work) throws IdempotencyException {
    if (row == null) {
      return onDatabase(false, work);
    }
    long[] mustBeDurable = new long[1];
    T result = inRowUnit(row, null, work, mustBeDurable);
    awaitDurable(mustBeDurable[0]);
    return result;
  }

  @Override
  public <T> T write(Durability durability, Object row, SqlWork<T> work) throws IdempotencyException {
    if (row == null) {
      return onDatabase(true, work);
    }
    long[] mustBeDurable = new long[1];
    T result = inRowUnit(row, durability, work, mustBeDurable);
    awaitDurable(mustBeDurable[0]);
    int size = backlogSize.get();
    if (size >= APPLY_BATCH && applierWaiting) {
      signal(backlogGrew); // a signal missed in a race costs the applier one APPLY_INTERVAL_NANOS
    }
    if (size > MAX_BACKLOG) {
      awaitBacklogBelowLimit();
    }
    return result;
  }

  /**
   * Runs a unit on one row under its stripe lock, logs the rows it changed (unless
   * {@code durability} is null: a read), and sets {@code mustBeDurable[0]} to the ticket the caller
   * must wait for: its own SYNC write, or the last SYNC write of the row, which it may have read.
   * The row's SYNC ticket is recorded before the row lock is released, so that the next unit on the
   * row sees it.
   */
  private <T> T inRowUnit(Object row, Durability durability, SqlWork<T> work, long[] mustBeDurable)
      throws IdempotencyException {
    ReentrantLock rowLock = rowLocks[Math.floorMod(row.hashCode(), STRIPES)];
    databaseLock.readLock().lock();
    try {
      rowLock.lock();
      try {
        ensureUsable();
        Unit unit = new Unit();
        T result;
        try {
          result = work.run(unit);
        } catch (SQLException e) {
          throw JournalErrors.wrap((durability == null ? "read of " : "write of ") + row + " on " + name, e);
        }
        long last = 0;
        if (durability != null && !unit.changes.isEmpty()) {
          long now = System.nanoTime();
          for (Map.Entry<RowKey, RawRow> change : unit.changes.entrySet()) {
            RowKey key = change.getKey();
            RawRow image = change.getValue();
            long ticket = log.append(key, () -> RowImage.encode(image));
            boolean created = unit.absent.contains(key);
            if (created) {
              keys.add(key); // before another unit can look for it
            }
            Logged logged = new Logged(key, image, ticket, now, created);
            overlay.put(key, logged);
            backlog.add(logged);
            backlogSize.incrementAndGet();
            last = ticket;
          }
        }
        if (durability == Durability.SYNC && last > 0) {
          if (unsyncedRows.size() >= 256) {
            long durable = log.durableTicket();
            unsyncedRows.values().removeIf(t -> t <= durable);
          }
          unsyncedRows.put(row, last);
          mustBeDurable[0] = last;
        } else {
          mustBeDurable[0] = unsyncedTicket(row);
        }
        return result;
      } finally {
        rowLock.unlock();
      }
    } finally {
      databaseLock.readLock().unlock();
    }
  }

  private long unsyncedTicket(Object row) {
    Long ticket = unsyncedRows.get(row);
    return ticket == null ? 0 : ticket;
  }

  /**
   * Forces the log: every write so far is then durable. Rows reach H2 later, in the applier's
   * batches; work that reads H2 directly applies them first.
   */
  @Override
  public void flush() throws IdempotencyException {
    ensureUsable();
    awaitDurable(log.lastAppended());
  }

  /**
   * Runs work that names no row on the database, after forcing the log and applying every logged
   * row. A write is committed, synced and followed by a new log cycle before this returns.
   */
  private <T> T onDatabase(boolean isWrite, SqlWork<T> work) throws IdempotencyException {
    applyLock.lock();
    try {
      ensureUsable();
      applyBacklogDownTo(EXCLUSIVE_TAIL);
      databaseLock.writeLock().lock();
      try {
        ensureUsable();
        applyEverything();
        T result;
        try {
          result = work.run(writerSession);
          writer.commit();
        } catch (SQLException e) {
          rollbackQuietly();
          throw JournalErrors.wrap((isWrite ? "write" : "read") + " on " + name, e);
        } catch (IdempotencyException | RuntimeException | Error e) {
          rollbackQuietly();
          throw e;
        }
        if (isWrite) {
          checkpointLocked();
        }
        return result;
      } finally {
        databaseLock.writeLock().unlock();
      }
    } finally {
      applyLock.unlock();
    }
  }

  private void rollbackQuietly() {
    try {
      writer.rollback();
    } catch (SQLException e) {
      broken = e;
    }
  }

  /** With applyLock and the exclusive database lock held: forces the log, writes every logged row to H2. */
  private void applyEverything() throws JournalException {
    awaitDurable(log.lastAppended());
    while (backlogSize.get() > 0) {
      applyBatch(takeBatch());
    }
  }

  /**
   * With applyLock held, and writers still running: applies logged rows until at most {@code tail}
   * are left, so that the exclusive section that follows (which stops every writer) applies only
   * those. Applying a whole cycle's backlog under the exclusive lock stopped every writer for 0.4
   * to 1 s of each 2 s with 32 writers. Writers keep logging meanwhile, and may log as fast as
   * the passes apply (up to {@link #MAX_BACKLOG}), so the passes are bounded: the exclusive
   * section then applies what is left, as before.
   */
  private void applyBacklogDownTo(int tail) throws JournalException {
    for (int pass = 0; pass < MAX_PRE_APPLY_BATCHES && backlogSize.get() > tail; pass++) {
      awaitDurable(log.lastAppended());
      List<Logged> batch = takeBatch();
      if (batch.isEmpty()) {
        return;
      }
      applyBatch(batch);
    }
  }

  /** With applyLock and the exclusive database lock held: applies everything, syncs H2, new log cycle. */
  private void checkpointLocked() throws JournalException {
    applyEverything();
    try {
      syncDatabase();
      log.reset();
    } catch (SQLException e) {
      broken = e;
      throw JournalErrors.wrap("checkpoint on " + name, e);
    } catch (IOException | RuntimeException e) {
      broken = e;
      throw new JournalException("checkpoint of the log of " + name + " failed: " + e, e);
    }
    unsyncedRows.clear();
  }

  private void syncDatabase() throws SQLException, IOException {
    if (diskSync != null) {
      diskSync.sync();
    }
  }

  /**
   * With applyLock held: the oldest logged rows whose records are durable, up to a batch. Per row,
   * the backlog is in log order (a row's units run one at a time); across rows a durable row may
   * wait behind one that is not yet, which only delays it.
   */
  private List<Logged> takeBatch() {
    List<Logged> batch = new ArrayList<>();
    long durable = log.durableTicket();
    for (Logged next = backlog.peek(); next != null && next.ticket() <= durable && batch.size() < APPLY_BATCH;
        next = backlog.peek()) {
      batch.add(backlog.poll());
      backlogSize.decrementAndGet();
    }
    return batch;
  }

  /**
   * With applyLock held: writes a batch of logged rows to H2 (the last image of each row) and
   * commits, then drops from the overlay the rows that no later write replaced. Rows created within
   * the batch are inserted and the others updated: a merge looks each row up first, and that look-up
   * was most of the applier's time.
   */
  private void applyBatch(List<Logged> batch) throws JournalException {
    if (batch.isEmpty()) {
      return;
    }
    Map<RowKey, RawRow> latest = new LinkedHashMap<>();
    Set<RowKey> created = new HashSet<>();
    for (Logged l : batch) {
      latest.put(l.key(), l.row());
      if (l.created()) {
        created.add(l.key());
      }
    }
    List<RawRow> inserts = new ArrayList<>(created.size());
    List<RawRow> updates = new ArrayList<>(latest.size() - created.size());
    latest.forEach((key, row) -> (created.contains(key) ? inserts : updates).add(row));
    try {
      try {
        sql.insertAll(writerSession, inserts);
        List<RawRow> missing = sql.updateAll(writerSession, updates);
        if (!missing.isEmpty()) {
          sql.mergeAll(writerSession, missing); // not expected: each was created by an earlier batch
        }
      } catch (SQLException e) {
        if (!"23505".equals(e.getSQLState())) {
          throw e;
        }
        // A row the journal created already existed: its key filter or overlay was wrong, and a
        // begin reported a new operation for a known key. Say so loudly; a merge keeps the latest.
        LOG.error("Idem journal {}: a row created by the journal already existed in the database; please"
            + " report this as a bug (the newest write of each row is kept)", name);
        writer.rollback();
        sql.mergeAll(writerSession, latest.values());
      }
      writer.commit();
    } catch (SQLException e) {
      broken = e;
      rollbackQuietly();
      throw JournalErrors.wrap("write of logged rows to the database of " + name, e);
    }
    for (Logged l : batch) {
      overlay.remove(l.key(), l);
    }
    signal(backlogShrank);
  }

  private void applyLoop() {
    while (!closed && broken == null) {
      try {
        signalLock.lock();
        try {
          if (backlogSize.get() < APPLY_BATCH) {
            // A short wait even when busy: rows of several operations share one H2 transaction.
            applierWaiting = true;
            try {
              backlogGrew.awaitNanos(APPLY_INTERVAL_NANOS);
            } finally {
              applierWaiting = false;
            }
          }
        } finally {
          signalLock.unlock();
        }
        if (closed || broken != null) {
          return;
        }
        if (log.pendingNanos() >= deferredCommitNanos) {
          awaitDurable(log.lastAppended());
        }
        log.preallocateAhead();
        Logged oldest = backlog.peek();
        if (backlogSize.get() < APPLY_BATCH
            && (oldest == null || System.nanoTime() - oldest.loggedAt() < APPLY_MAX_DELAY_NANOS)) {
          continue;
        }
        applyLock.lock();
        try {
          if (closed) {
            return;
          }
          applyBatch(takeBatch());
          if (log.cycleBytes() >= checkpointBytes) {
            applyBacklogDownTo(EXCLUSIVE_TAIL);
            databaseLock.writeLock().lock();
            try {
              checkpointLocked();
            } finally {
              databaseLock.writeLock().unlock();
            }
          }
        } finally {
          applyLock.unlock();
        }
      } catch (InterruptedException e) {
        return;
      } catch (IOException | RuntimeException e) {
        if (closed) {
          return; // the log was closed under a last preallocation
        }
        if (broken == null) {
          broken = e;
        }
        LOG.error("Idem journal {}: writing logged operations to the database failed; the journal is unusable"
            + " until reopened, and reopening replays its log ({})", name, e.getMessage());
        return;
      }
    }
  }

  private void signal(Condition condition) {
    signalLock.lock();
    try {
      condition.signalAll();
    } finally {
      signalLock.unlock();
    }
  }

  /** Returns once the log is durable up to {@code ticket}, forcing it if no other thread is. */
  private void awaitDurable(long ticket) throws JournalException {
    if (ticket <= 0 || log.durableTicket() >= ticket) {
      return;
    }
    failIfBroken();
    try {
      log.awaitDurable(ticket);
    } catch (IOException | RuntimeException e) {
      broken = e;
      throw new JournalException("writing the log of " + name + " failed: " + e, e);
    }
  }

  private void awaitBacklogBelowLimit() throws JournalException {
    signalLock.lock();
    try {
      backlogGrew.signalAll();
      while (backlogSize.get() > MAX_BACKLOG && broken == null && !closed) {
        backlogShrank.await(10, TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      signalLock.unlock();
    }
    failIfBroken();
  }

  private void ensureUsable() throws JournalException {
    JournalErrors.checkUsable(name, closed, broken);
  }

  private void failIfBroken() throws JournalException {
    JournalErrors.checkUsable(name, false, broken);
  }

  /** Applies everything, syncs H2 and empties the log (so that the next open replays nothing), then closes. */
  @Override
  public void close() throws IdempotencyException {
    JournalException failure = null;
    applyLock.lock();
    try {
      databaseLock.writeLock().lock();
      try {
        if (closed) {
          return;
        }
        if (broken == null) {
          try {
            checkpointLocked();
          } catch (JournalException e) {
            failure = e;
          }
        }
        closed = true;
      } finally {
        databaseLock.writeLock().unlock();
      }
    } finally {
      applyLock.unlock();
    }
    signal(backlogGrew);
    signal(backlogShrank);
    try {
      applier.join(TimeUnit.SECONDS.toMillis(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    List<AutoCloseable> resources = new ArrayList<>(allReaderSessions);
    resources.addAll(List.of(writerSession, log));
    if (diskSync != null) {
      resources.add(diskSync);
    }
    for (AutoCloseable c : resources) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        if (failure == null) {
          failure = new JournalException("close of " + name + " failed: " + e, e);
        }
      }
    }
    try {
      if (broken != null) {
        writer.rollback();
      }
    } catch (SQLException ignored) {
      // closing anyway; the log has what the database lacks
    }
    List<Connection> connections = new ArrayList<>(readers);
    connections.add(writer);
    for (Connection c : connections) {
      try {
        c.close();
      } catch (SQLException e) {
        if (failure == null) {
          failure = JournalErrors.wrap("close of " + name, e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * The session of one unit of work that names its row: reads see the unit's own changes, then the
   * overlay, then H2; writes stay in the unit until it ends without throwing. It runs no SQL of
   * its own: {@link OverlayTable} answers every single-row method.
   */
  private final class Unit implements SqlSession, OverlayTable.Rows {
    final Map<RowKey, RawRow> changes = new LinkedHashMap<>(4);
    /** Rows this unit found nowhere: a change to one creates it. */
    final Set<RowKey> absent = new HashSet<>(2);

    @Override
    public RawRow get(OperationId id) throws SQLException {
      RowKey key = RowKey.of(id);
      RawRow changed = changes.get(key);
      if (changed != null) {
        return changed;
      }
      Logged logged = overlay.get(key);
      if (logged != null) {
        return logged.row();
      }
      if (!keys.mightContain(key)) {
        absent.add(key);
        return null;
      }
      CachedStatements session = readerSessions.poll();
      if (session == null) {
        try {
          session = readerSessions.take();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new SQLException("interrupted while waiting for a reader connection of " + name, e);
        }
      }
      try {
        RawRow stored = sql.select(session, id, null);
        if (stored == null) {
          absent.add(key);
        }
        return stored;
      } finally {
        readerSessions.add(session);
      }
    }

    @Override
    public void put(RawRow row) {
      changes.put(new RowKey(row.scope(), row.operation(), row.key()), row);
    }

    @Override
    public Connection connection() {
      throw new IllegalStateException("a unit on one row of a logged journal runs no SQL of its own");
    }

    @Override
    public PreparedStatement prepare(String text) {
      throw new IllegalStateException("a unit on one row of a logged journal runs no SQL of its own");
    }

    @Override
    public void release(PreparedStatement statement) {
      throw new IllegalStateException("a unit on one row of a logged journal runs no SQL of its own");
    }
  }
}
