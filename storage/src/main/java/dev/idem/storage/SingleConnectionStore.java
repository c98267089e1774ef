package dev.idem.storage;

import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Store} over one connection to a database that this process owns (the embedded SQLite
 * journal, or an app's SQLite or H2 DataSource), with group commit.
 *
 * <p>Every unit of work runs on the one connection, inside a savepoint, in a transaction that stays
 * open until the next commit. A SYNC write waits for a commit that covers it; whoever commits
 * commits every unit executed so far, so concurrent callers share commits (and disk syncs) instead
 * of paying one each. DEFERRED writes ride along with the next commit, or are committed by a
 * background flusher within the deferred commit interval. No unit returns before every SYNC write
 * it could have read is durable; a unit that names its row waits only for SYNC writes of that row
 * (and for row-less ones such as a purge), so one operation's claim, attempt and completion do not
 * queue behind other operations' begins.
 *
 * <p>Callers do not take turns at the connection: whoever holds the statement lock runs the units
 * queued behind it too, and one commit round at a time commits everything run so far, syncs it,
 * and wakes each caller it covers once ({@link CommitWaiter}). A caller that waits for a round may
 * be handed the next one, instead of one more thread being woken to run it.
 *
 * <p>With a {@link DiskSync} (an embedded SQLite store no other connection writes, which commits
 * with {@code synchronous=NORMAL} and syncs its {@code -wal} file; an app's H2 DataSource), each
 * commit is followed by one disk sync, outside the statement lock, so the sync does not block
 * statements of the next group (which will share the next commit and sync). The next commit waits
 * for it: one round at a time. Without one (an app's SQLite DataSource, the guard's file once the
 * app's connections write it), SQLite's {@code synchronous=FULL} commit syncs inside the lock. The
 * guard's file, which the app's connections may share, starts with the first and switches to the
 * second for good before another writer's first write ({@link #expectOtherWriters}) or at the first
 * commit round that sees one ({@link ForeignWriters}).
 *
 * <p>Thread-safe.
 *
 * <p>Prepared statements are cached on the connection for its whole life ({@link CachedStatements}).
 * Each unit's savepoint is one reused, prepared {@code SAVEPOINT} statement for the same reason. A
 * {@link SingleStatementWork} runs without a savepoint (SQLite and H2 undo a failed statement
 * whole); if its statement fails in a way that may have rolled back the whole transaction, the
 * store finds out and breaks, as when a savepoint is found gone.
 *
 * <p>If a commit fails, the store is broken: every later call throws, because callers that were
 * waiting cannot know whether their record is on disk (and so must not send).
 *
 * <p>An embedded store's database file is checked after each commit round's commit and sync, before
 * any caller is told, and at close ({@link FileIdentity}, one {@code stat} per round): if its path
 * no longer leads to the file the store opened (its directory was removed, say), SQLite wrote the
 * round to files the next open will not find, so the round's callers get a
 * {@link CommitUnconfirmedException}, the store is broken, and its close throws too, rather than
 * return as a clean close that a reopen (which then starts an empty store) would contradict.
 *
 * <p>The lock file that keeps a store in a SQLite file to one process ({@link SqliteFileLock}) is
 * checked the same way, with one more {@code stat} per round: removed or replaced, it no longer
 * keeps anyone out, and another process may have opened the store and taken its in-flight
 * operations back for a resend. The round's callers then get a {@link LockLostException} (their
 * commit is in the database, but another owner may act on it), and the store is broken, so that
 * this process acts on the store no more.
 */
public final class SingleConnectionStore implements Store {
  private static final Logger LOG = LoggerFactory.getLogger(SingleConnectionStore.class);

  /**
   * The most queued units a lock holder runs before it lets the lock go and wakes the next queued
   * caller to run the rest: its own caller waits for them too.
   */
  private static final int DRAIN_LIMIT = 64;
  /** Ends the unit's savepoint, keeping its work in the transaction (SQLite only). */
  private static final String RELEASE = "RELEASE SAVEPOINT idem_unit";

  /** The store in messages and thread names: "journal", "idempotency store", "webhook inbox". */
  private final String what;
  private final String name;
  private final Connection connection;
  private final DiskSync diskSync;
  /**
   * Watches for other connections' commits while this store syncs outside its lock (the guard's
   * file, which may be shared); null when there is nothing to watch. Under the statement lock.
   */
  private final ForeignWriters foreignWriters;
  /** The embedded store's database file, or null: see {@link #filesGone}. */
  /** See the constructor; null if the store's close has nothing to mark before SQLite's last close. */
  private final Runnable checkpointedAtClose;
  private final FileIdentity databaseFile;
  /** The lock file that keeps the store to this process, as it was locked, or null: see {@link #filesGone}. */
  private final FileIdentity lockFile;
  /**
   * The failure that said the database file (or the lock file) was removed or replaced while open,
   * or null; once set, the store is broken, and its close throws it too, because a reopen will not
   * find what it held (or another process may own the store).
   */
  private final AtomicReference<Gone> filesGone = new AtomicReference<>();

  /** What {@link #filesGone} found, and whether about the lock file (else the database file). */
  private record Gone(JournalException reason, boolean lockFile) {}
  /**
   * True while commits are followed by {@link #diskSync}; false for good once a store that synced
   * outside its lock has switched to {@code synchronous=FULL}. Under the statement lock.
   */
  private boolean syncAfterCommit;
  /** Why the next commit round switches to {@code synchronous=FULL}, or null; under the statement lock. */
  private String switchToFull;
  /** True once the store commits with {@code synchronous=FULL} after watching for other writers. */
  private volatile boolean othersExpected;
  private final Duration deferredCommitInterval;
  private final ScheduledExecutorService flusher;

  /** Guards the connection, its statements and the counters below it. */
  private final ReentrantLock statementLock = new ReentrantLock();
  private final CachedStatements session;
  private final boolean sqlite;
  /** SQLite or H2: a failed statement is undone whole, so a single-statement unit needs no savepoint. */
  private final boolean statementsAtomic;
  private final boolean sharedDatabase;
  /** True while the open transaction holds a unit that may have written; under the statement lock. */
  private boolean transactionHasWrites;
  private long executedSeq;
  private long lastSyncSeq;
  /** The last SYNC write that named no row (a purge): everything must wait for it. */
  private long barrierSeq;
  /** Rows with a SYNC write that may not be durable yet, and that write's sequence number. */
  private final Map<Object, Long> unsyncedRows = new HashMap<>();
  private boolean flushScheduled;
  /** True once a failure to schedule the background commit was logged (once, not per write). */
  private boolean flushFailureLogged;
  /**
   * Null while open; then how it was closed ({@link Store#close(String)}). Written under the
   * statement lock, so that no unit of work starts after it is set; volatile for the flusher's
   * unlocked read after a failure.
   */
  private volatile String closedHow;

  /** Units waiting for the statement lock; whoever holds it runs them. */
  private final Queue<CommitWaiter<?>> queue = new ConcurrentLinkedQueue<>();
  /** Callers whose unit ran and who wait for a commit round; taken whole by each round. */
  private final Queue<CommitWaiter<?>> awaiting = new ConcurrentLinkedQueue<>();
  /** True while one caller holds the commit round (runs it, or is being handed it). */
  private final AtomicBoolean committing = new AtomicBoolean();
  private volatile long durableSeq;
  private volatile Throwable broken;
  /**
   * The highest sequence number a commit was asked for (set before the commit, under the statement
   * lock). A write at or below it that is not durable while the store is broken was committed, or
   * its commit's outcome is unknown: nothing rolls it back ({@link #awaitRound}).
   */
  private volatile long commitAskedSeq;

  /**
   * @param what the store in messages and its flusher thread's name ({@link Schema#what()})
   * @param name for messages, such as the journal directory
   * @param connection the connection for all work; switched to manual commit here
   * @param diskSync what forces each commit to the disk, or null to not sync to disk (commits then
   *     survive a process crash, not an OS crash); closed with the store
   * @param deferredCommitInterval the longest a DEFERRED write waits for its commit
   * @param sharedDatabase true if other connections write the same database (an app's DataSource;
   *     the guard's transactional mode, where the app's connections claim): then a read that finds
   *     no write of this store pending ends its transaction at once, so that the next unit reads
   *     what the others committed meanwhile, a write never fails on an outdated snapshot
   *     (SQLITE_BUSY_SNAPSHOT), and an idle store pins no snapshot that would stop the others'
   *     checkpoints from restarting the {@code -wal} file
   */
  public SingleConnectionStore(String what, String name, Connection connection, DiskSync diskSync,
      Duration deferredCommitInterval, boolean sharedDatabase) throws SQLException {
    this(what, name, connection, diskSync, deferredCommitInterval, sharedDatabase, null);
  }

  /**
   * @param foreignWriters for a SQLite database other connections may write, whose commits are
   *     {@code synchronous=NORMAL} followed by {@code diskSync}: seen other writers switch the
   *     store to {@code synchronous=FULL} for good ({@link #expectOtherWriters}); null otherwise
   */
  SingleConnectionStore(String what, String name, Connection connection, DiskSync diskSync,
      Duration deferredCommitInterval, boolean sharedDatabase, ForeignWriters foreignWriters) throws SQLException {
    this(what, name, connection, diskSync, deferredCommitInterval, sharedDatabase, foreignWriters, null, null);
  }

  /**
   * @param databaseFile the database file the connection opened (an embedded store's), checked
   *     before each commit round is acknowledged and at close ({@link FileIdentity}); null for an
   *     app's DataSource, whose files the store does not own
   * @param lockFile the lock file that keeps the store to this process ({@link SqliteFileLock}), as
   *     it was locked, checked as {@code databaseFile} is; null if there is none (H2, PostgreSQL)
   */
  SingleConnectionStore(String what, String name, Connection connection, DiskSync diskSync,
      Duration deferredCommitInterval, boolean sharedDatabase, ForeignWriters foreignWriters,
      FileIdentity databaseFile, FileIdentity lockFile) throws SQLException {
    this(what, name, connection, diskSync, deferredCommitInterval, sharedDatabase, foreignWriters, databaseFile,
        lockFile, null);
  }

  /**
   * @param checkpointedAtClose for an embedded store that owns its files: run by a clean close
   *     once SQLite has checkpointed every commit into the database file, before the connection's
   *     close (SQLite's last close, which removes the {@code -wal} file); it records that in the
   *     open marker ({@link EmbeddedFiles#markCheckpointedAtClose}). Null for any other store.
   */
  SingleConnectionStore(String what, String name, Connection connection, DiskSync diskSync,
      Duration deferredCommitInterval, boolean sharedDatabase, ForeignWriters foreignWriters,
      FileIdentity databaseFile, FileIdentity lockFile, Runnable checkpointedAtClose) throws SQLException {
    this.checkpointedAtClose = checkpointedAtClose;
    this.databaseFile = databaseFile;
    this.lockFile = lockFile;
    this.foreignWriters = foreignWriters;
    this.syncAfterCommit = diskSync != null;
    this.othersExpected = foreignWriters == null;
    this.what = what;
    this.sharedDatabase = sharedDatabase;
    this.name = name;
    this.connection = connection;
    this.diskSync = diskSync;
    this.deferredCommitInterval = deferredCommitInterval;
    connection.setAutoCommit(false);
    String product = connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
    this.sqlite = product.contains("sqlite");
    this.statementsAtomic = sqlite || product.equals("h2");
    this.session = new CachedStatements(connection);
    this.flusher = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "idem-" + what.replace(' ', '-') + "-flusher");
      t.setDaemon(true);
      return t;
    });
  }

  @Override
  public <T> T read(Object row, SqlWork<T> work) throws IdempotencyException {
    return run(row, work, null);
  }

  @Override
  public <T> T write(Durability durability, Object row, SqlWork<T> work) throws IdempotencyException {
    return run(row, work, r -> durability);
  }

  @Override
  public <T> T writeDeciding(Object row, SqlWork<T> work, Function<? super T, Durability> decide)
      throws IdempotencyException {
    return run(row, work, decide);
  }

  /**
   * Runs a unit of work: a read if {@code decide} is null, else a write as durable as it decides.
   *
   * <p>Whoever holds the statement lock runs the units queued for it, its own and the others', one
   * after another, before it lets the lock go (flat combining). A caller that finds the lock taken
   * queues its unit and parks once, until its unit has run and, if it must, until the commit round
   * covering it has ended. Handing the lock from one parked writer to the next instead cost a
   * wake-up per statement, during which the lock stood idle: on two cores, with 32 callers, a commit
   * round carried 3 to 4 calls and each call cost 2.7 to 3.3 context switches.
   */
  private <T> T run(Object row, SqlWork<T> work, Function<? super T, Durability> decide)
      throws IdempotencyException {
    CommitWaiter<T> unit = new CommitWaiter<>(row, work, decide, CommitWaiter.QUEUED);
    boolean interrupted = false;
    if (statementLock.isHeldByCurrentThread()) {
      execute(unit); // a unit run from inside another one's work: runs in place, as it always did
    } else if (statementLock.tryLock()) {
      List<CommitWaiter<?>> ended = List.of();
      try {
        execute(unit);
        ended = drainQueue();
      } finally {
        unlockStatements();
      }
      wakeAll(ended);
      startRoundIfIdle(unit);
    } else {
      queue.add(unit);
      // Uninterruptible, as taking the lock always was: a unit that may have run must not be
      // walked away from as if it had not.
      while (unit.state() == CommitWaiter.QUEUED) {
        if (statementLock.tryLock()) {
          List<CommitWaiter<?>> ended = List.of();
          try {
            ended = drainQueue();
          } finally {
            unlockStatements();
          }
          wakeAll(ended);
          startRoundIfIdle(unit);
          continue;
        }
        LockSupport.park(this);
        interrupted |= Thread.interrupted();
      }
    }
    awaitRound(unit, interrupted);
    return unit.result;
  }

  /**
   * Runs the queued units, up to {@link #DRAIN_LIMIT} of them, so that the lock holder's own caller
   * is not held back without end by a steady stream of others; under the statement lock. Returns
   * those that need no commit round, to be woken once the lock is free: waking a thread is a
   * system call, which a commit waiting for the lock need not wait for. (Empty, and nothing
   * allocated, when the queue was: a lone caller's usual case.)
   */
  private List<CommitWaiter<?>> drainQueue() {
    List<CommitWaiter<?>> ended = null;
    for (int n = 0; n < DRAIN_LIMIT; n++) {
      CommitWaiter<?> next = queue.poll();
      if (next == null) {
        break;
      }
      if (execute(next)) {
        if (ended == null) {
          ended = new ArrayList<>();
        }
        ended.add(next);
      }
    }
    return ended == null ? List.of() : ended;
  }

  private static void wakeAll(List<CommitWaiter<?>> ended) {
    for (CommitWaiter<?> w : ended) {
      w.wake();
    }
  }

  /**
   * Runs one unit, under the statement lock, and says what its caller waits for next: nothing
   * (DONE; true: its caller is to be woken), or a commit round (WAITING, in {@link #awaiting}, woken
   * when the round ends or when put on duty).
   */
  private <T> boolean execute(CommitWaiter<T> unit) {
    long mustBeDurable;
    boolean ran = false;
    try {
      checkUsable(closedHow);
      unit.result = runAtomically(unit.work);
      ran = true;
      if (unit.decide == null) {
        mustBeDurable = syncWritesVisibleTo(unit.row);
        if (sharedDatabase && !transactionHasWrites) {
          endReadTransaction();
        }
      } else {
        transactionHasWrites = true;
        mustBeDurable = written(unit.row, unit.decide.apply(unit.result));
        unit.wrote = executedSeq;
      }
    } catch (IdempotencyException | RuntimeException | Error e) {
      if (ran && unit.decide != null) {
        // The write's statements ran and its savepoint is released: it cannot be undone alone, and
        // the next round would commit it while its caller is told it failed. Nothing commits now.
        markBroken(e);
      }
      unit.end(e);
      return true;
    }
    if (mustBeDurable <= durableSeq) {
      unit.end(null);
      return true;
    }
    // Listed before it is marked WAITING: whoever finds it WAITING finds it listed.
    unit.seq = mustBeDurable;
    awaiting.add(unit);
    unit.waiting();
    return false;
  }

  /**
   * Lets the statement lock go, and wakes the first queued caller, which takes the lock and runs
   * the queue: a unit queued while the lock was held is never left without someone to run it (it
   * was queued before its caller failed to take the lock, so before this unlock, so it is seen
   * here). The lock's holder does not run that queue itself here: it may be a commit round with a
   * disk sync to start, which the queue's statements would hold back.
   */
  private void unlockStatements() {
    statementLock.unlock();
    CommitWaiter<?> head = queue.peek();
    if (head != null) {
      LockSupport.unpark(head.owner);
    }
  }

  /**
   * Waits until the unit, which has run, is DONE; runs a commit round when put on duty, or when
   * nobody runs one. An interrupt does not end the wait: the unit's write is in the open
   * transaction, and the next commit (anyone's, the close's) makes it durable whether or not its
   * caller waits, so a caller that left with an exception was told its write did not happen while
   * the journal kept it (a begin then sent later, after its caller retried with a new key). The
   * wait is bounded by the round running now and the one after it; the interrupt is restored for
   * the caller to see on return. Rounds run with the interrupt cleared: a disk sync on an
   * interrupted thread closes the file it syncs, which broke the store for every caller.
   */
  private void awaitRound(CommitWaiter<?> waiter, boolean interruptedBefore) throws IdempotencyException {
    boolean interrupted = interruptedBefore | Thread.interrupted();
    try {
      while (true) {
        int state = waiter.state();
        if (state == CommitWaiter.DONE) {
          break;
        }
        if (state == CommitWaiter.DUTY) {
          commitRound();
          continue;
        }
        if (!committing.get() && committing.compareAndSet(false, true)) {
          if (!waiter.move(CommitWaiter.WAITING, CommitWaiter.DUTY)) {
            releaseRound(); // finished meanwhile: nothing of its own left to commit
          }
          continue;
        }
        LockSupport.park(this);
        interrupted |= Thread.interrupted();
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    if (waiter.failure != null) {
      rethrow(waiter.failure);
    }
    // A write a round made durable (committed, synced, its files checked) was done, whatever
    // broke the store since (the next group's statements run during the round's sync): told it
    // as a plain JournalException, a journal's begin would be explained as "nothing was sent"
    // and retried under a new key, while the next resume sends the durable record under the old
    // one. A write a round committed, or asked to commit, that did not end durable (its commit,
    // sync or file check failed: nothing rolls it back) is told its commit is unconfirmed, as that
    // round's callers are. A read, or a write no commit covered (it will be rolled back), is
    // refused as before.
    if (waiter.wrote == 0 || waiter.wrote > durableSeq) {
      Throwable brokenBy;
      if (waiter.wrote != 0 && (brokenBy = broken) != null && waiter.wrote <= commitAskedSeq) {
        // (Or a round still syncing it, beside which the store broke: "unconfirmed" is true then too.)
        throw new CommitUnconfirmedException(what + " " + name + " is unusable after a failed write (" + brokenBy
            + "), and this write's commit is not confirmed: it was committed, or its commit failed, in a round"
            + " whose sync or check did not succeed; the database may or may not hold it", brokenBy);
      }
      failIfBroken();
    }
  }

  private static void rethrow(Throwable failure) throws IdempotencyException {
    if (failure instanceof IdempotencyException e) {
      throw e;
    }
    if (failure instanceof RuntimeException e) {
      throw e;
    }
    if (failure instanceof Error e) {
      throw e;
    }
    throw new IllegalStateException(failure); // units throw nothing else
  }

  /** Returns once everything up to {@code seq} is committed (and synced), committing it if need be. */
  private void awaitDurable(long seq) throws IdempotencyException {
    if (seq > durableSeq) {
      CommitWaiter<Void> waiter = CommitWaiter.forSeq(seq);
      awaiting.add(waiter);
      startRoundIfIdle(waiter);
      awaitRound(waiter, false);
    }
    failIfBroken();
  }

  /**
   * After callers were added to {@link #awaiting}: if no round runs, takes the round and puts one
   * of them on duty ({@code preferred}, the calling thread's own, if it waits: then nobody is
   * woken). Together with {@link #releaseRound} (which lets the round go, then looks at the list),
   * no waiting caller is left without a round: each side writes, then reads what the other writes.
   */
  private void startRoundIfIdle(CommitWaiter<?> preferred) {
    if (awaiting.isEmpty() || committing.get() || !committing.compareAndSet(false, true)) {
      return;
    }
    if (!putOnDuty(preferred)) {
      releaseRound();
    }
  }

  /** With the round taken: hands it to a waiting caller; false if none waits (the round is still held). */
  private boolean putOnDuty(CommitWaiter<?> preferred) {
    if (preferred != null && preferred.move(CommitWaiter.WAITING, CommitWaiter.DUTY)) {
      preferred.wake();
      return true;
    }
    for (CommitWaiter<?> w : awaiting) {
      if (w.move(CommitWaiter.WAITING, CommitWaiter.DUTY)) {
        w.wake();
        return true;
      }
    }
    return false;
  }

  /** Lets the round go; if callers wait for one, takes it back and puts one of them on duty. */
  private void releaseRound() {
    while (true) {
      committing.set(false);
      if (awaiting.isEmpty() || !committing.compareAndSet(false, true)) {
        return;
      }
      if (putOnDuty(null)) {
        return;
      }
    }
  }

  /**
   * Records a write just run; returns the sequence number that must be durable before it returns.
   * Throws only an Error from scheduling the background flush, after breaking the store.
   */
  private long written(Object row, Durability durability) {
    long seq = ++executedSeq;
    if (durability == Durability.DEFERRED) {
      if (!flushScheduled && !scheduleFlush()) {
        // No background commit will come for it: its caller waits for a round, as for a SYNC
        // write. Told it failed, the caller would see its write committed by the next round
        // anyway: its savepoint is released, so it cannot be undone alone.
        return seq;
      }
      return syncWritesVisibleTo(row);
    }
    lastSyncSeq = seq;
    if (row == null) {
      barrierSeq = seq;
    } else {
      if (unsyncedRows.size() >= 256) {
        long durable = durableSeq;
        unsyncedRows.values().removeIf(s -> s <= durable);
      }
      unsyncedRows.put(row, seq);
    }
    return seq;
  }

  /**
   * Schedules the background commit of the deferred writes; under the statement lock. False if it
   * cannot be scheduled (the interval does not fit in nanoseconds, the executor refuses): then the
   * next deferred write tries again. An Error (no thread for the flusher: "unable to create native
   * thread") breaks the store, as an Error in a unit does, and is thrown: the write it follows is
   * then never committed, which is what its caller is told.
   */
  private boolean scheduleFlush() {
    flushScheduled = true;
    try {
      flusher.schedule(this::backgroundFlush, deferredCommitInterval.toNanos(), TimeUnit.NANOSECONDS);
      return true;
    } catch (RuntimeException e) {
      flushScheduled = false;
      if (!flushFailureLogged) {
        flushFailureLogged = true;
        LOG.warn("Idem {} {}: cannot schedule the background commit of deferred writes ({}); each is committed"
            + " before its caller returns instead", what, name, e.toString());
      }
      return false;
    } catch (Error e) {
      flushScheduled = false;
      markBroken(e);
      throw e;
    }
  }

  /**
   * The sequence number up to which work must be durable before a unit that touched {@code row}
   * (null: any row) returns: the last SYNC write it could have read. A unit on one operation waits
   * only for SYNC writes of that operation (and of no particular row, such as a purge), not for
   * other threads' begins: otherwise every claim, attempt and completion would wait for the group
   * commit of whatever begins happen to be in flight, and concurrent operations would queue behind
   * one another's commits.
   */
  private long syncWritesVisibleTo(Object row) {
    if (row == null) {
      return lastSyncSeq;
    }
    Long seq = unsyncedRows.get(row);
    return seq == null ? barrierSeq : Math.max(seq, barrierSeq);
  }

  @Override
  public void flush() throws IdempotencyException {
    long target;
    statementLock.lock();
    try {
      checkUsable(closedHow);
      target = executedSeq;
    } finally {
      unlockStatements();
    }
    awaitDurable(target);
  }

  private void backgroundFlush() {
    statementLock.lock();
    try {
      flushScheduled = false;
      if (closedHow != null) {
        return;
      }
    } finally {
      unlockStatements();
    }
    try {
      flush();
    } catch (IdempotencyException | RuntimeException e) {
      if (closedHow != null && broken == null) {
        // close() ran meanwhile: it committed every deferred write itself and then stopped this
        // thread (the interrupt, or "closed"), which is all this failure says. A commit that
        // really failed breaks the store, and is logged below whatever close did.
        LOG.debug("Idem {} {}: background commit stopped by close ({})", what, name, e.getMessage());
        return;
      }
      LOG.error("Idem {} {}: committing deferred writes failed; it is unusable until reopened ({})", what,
          name, e.getMessage());
    } catch (Error e) {
      // An Error (OutOfMemoryError, say) must not end in the executor's future, unseen: whether the
      // commit happened is unknown, so the journal is broken, and every later call says why.
      markBroken(e);
      LOG.error("Idem {} {}: the background commit failed with {}; it is unusable until reopened", what,
          name, e.toString());
    }
  }

  private <T> T runAtomically(SqlWork<T> work) throws IdempotencyException {
    // A unit that writes with one statement needs no savepoint: if that statement fails, the
    // database has undone it, and nothing else of the unit was written. What a savepoint also told
    // is whether the failure took the whole open transaction (other callers' uncommitted work) with
    // it; failIfTransactionLost finds that out instead.
    boolean savepoint = !(statementsAtomic && work instanceof SingleStatementWork);
    try {
      if (savepoint) {
        session.prepare("SAVEPOINT idem_unit").executeUpdate();
      }
    } catch (SQLException e) {
      throw StoreErrors.wrap(what, "savepoint on " + name, e);
    }
    T result;
    try {
      result = work.run(session);
    } catch (SQLException e) {
      if (savepoint) {
        rollback(e);
      } else {
        failIfTransactionLost(e);
      }
      throw StoreErrors.wrap(what, "statement on " + name, e);
    } catch (IdempotencyException | RuntimeException | Error e) {
      if (e instanceof Error error) {
        markBroken(error); // the unit stopped anywhere; what else that Error hit is unknown
      }
      if (savepoint) {
        rollback(e);
      }
      throw e;
    }
    if (savepoint) {
      release();
    }
    return result;
  }

  /**
   * After a failed statement outside a savepoint: breaks the store if the failure may have rolled
   * back the open transaction. SQLite does so on some errors (SQLITE_FULL, SQLITE_IOERR,
   * SQLITE_BUSY, SQLITE_NOMEM, SQLITE_INTERRUPT, at its choice), and leaves the connection outside
   * any transaction: a BEGIN then succeeds, where inside the transaction sqlite-jdbc keeps open it
   * fails. H2 rolls a transaction back only with a class 40 SQLState (a deadlock).
   */
  private void failIfTransactionLost(SQLException cause) throws JournalException {
    boolean lost;
    if (sqlite) {
      try (Statement probe = connection.createStatement()) {
        probe.execute("BEGIN");
        lost = true; // the transaction was gone; this BEGIN opened a new one, as sqlite-jdbc expects
      } catch (SQLException stillOpen) {
        lost = !String.valueOf(stillOpen.getMessage()).contains("within a transaction");
        if (lost) {
          cause.addSuppressed(stillOpen);
        }
      }
    } else {
      lost = cause.getSQLState() != null && cause.getSQLState().startsWith("40");
    }
    if (lost) {
      broken = cause;
      throw StoreErrors.wrapUnusable(what, name, cause);
    }
  }

  /**
   * SQLite: ends the unit's savepoint; its work stays in the open transaction. Without it every
   * unit nested one more savepoint (SQLite's SAVEPOINT of an existing name opens another), and
   * SQLite copied each page a unit changed into the savepoints' sub-journal, which grew past its
   * in-memory limit into a temporary file: with 32 callers, 43 KB of sub-journal writes per
   * operation, four times its WAL traffic (counted with strace). With one savepoint at a time the
   * sub-journal stays small, in memory, and is reset at each release.
   */
  private void release() throws JournalException {
    if (!sqlite) {
      return;
    }
    try {
      session.prepare(RELEASE).executeUpdate();
    } catch (SQLException e) {
      broken = e;
      throw StoreErrors.wrapUnusable(what, name, e);
    }
  }

  /** Ends a transaction that only read (cheap: nothing to sync); under the statement lock. */
  private void endReadTransaction() throws JournalException {
    try {
      connection.commit();
    } catch (SQLException e) {
      broken = e;
      throw StoreErrors.wrap(what, "end of a read on " + name, e);
    }
  }

  /** Records the first failure that makes this store unusable; later calls throw, naming it. */
  private void markBroken(Throwable cause) {
    if (broken == null) {
      broken = cause;
    }
  }

  /**
   * Undoes the failed unit only. SQLite may already have rolled back the whole transaction (it may
   * on SQLITE_FULL and I/O errors), taking other callers' uncommitted work with it; then the
   * savepoint is gone, and the store is broken: no one may be told that work is durable.
   */
  private void rollback(Throwable cause) throws JournalException {
    try {
      session.prepare("ROLLBACK TO SAVEPOINT idem_unit").executeUpdate();
      if (sqlite) {
        session.prepare(RELEASE).executeUpdate(); // ROLLBACK TO keeps the savepoint open
      }
    } catch (SQLException e) {
      broken = cause;
      cause.addSuppressed(e);
      throw cause instanceof SQLException sql ? StoreErrors.wrapUnusable(what, name, sql)
          : StoreErrors.unusable(what, name, cause);
    }
  }

  /**
   * Runs one commit round for every caller in {@link #awaiting}: commits everything run so far,
   * syncs it outside the statement lock (so that the next round's statements run during the sync),
   * then wakes each of those callers once. The calling thread holds the round ({@link #committing})
   * and lets it go, or hands it on, at the end. One round at a time: the next commit begins after
   * this sync has ended, so that frames reach the disk in commit order.
   */
  private void commitRound() {
    List<CommitWaiter<?>> batch = new ArrayList<>();
    Throwable failure = null;
    long target = 0;
    boolean committed = false;
    boolean sync = false;
    statementLock.lock();
    try {
      target = executedSeq;
      // Under the lock, after the target: every caller listed by now ran before the target was
      // read (a flush's sequence number was read under this lock earlier), so the commit covers it.
      long needed = 0;
      for (CommitWaiter<?> w; (w = awaiting.poll()) != null;) {
        batch.add(w);
        needed = Math.max(needed, w.seq);
      }
      // Under the statement lock: a unit that failed meanwhile may have taken the open transaction
      // (and the work of the callers in this batch) down with it.
      failIfBroken();
      // A caller may have started waiting just before the round before it ended, for writes that
      // round made durable: it is told so without a commit of its own.
      if (needed > durableSeq) {
        if (foreignWriters != null && switchToFull == null && !othersExpected && foreignWriters.othersCommitted()) {
          switchToFull = "another connection committed to it while this store synced its commits outside its lock";
          LOG.warn("Idem {} {}: {}; from now on its commits sync inside SQLite's commit (synchronous=FULL), as for"
              + " a file the app's connections share (expected once if they do, as in transactional mode)", what,
              name, switchToFull);
        }
        commitAskedSeq = target;
        connection.commit();
        committed = true;
        transactionHasWrites = false;
        // This commit was NORMAL, so it is still synced below; the next ones sync inside SQLite's.
        sync = syncAfterCommit;
        if (switchToFull != null) {
          commitWithFullSync();
        }
      }
    } catch (SQLException e) {
      broken = e;
      // Committed or not, nobody can tell until a reopen reads the file: CommitUnconfirmedException.
      failure = StoreErrors.wrapCommit(what, "commit on " + name, e);
    } catch (JournalException e) {
      failure = e;
    } catch (RuntimeException | Error e) {
      markBroken(e); // committed or not, nobody can tell: no one may be told that work is durable
      failure = e;
    } finally {
      unlockStatements();
    }
    try {
      if (failure == null && sync) {
        failure = syncToDisk();
      }
      if (failure == null && committed) {
        // After the commit and its sync, before anyone is told: the commit is durable only if it
        // went to the file the next open reads, and acts for this process only while its lock file
        // keeps others out. One stat of each per round, however many callers it covers.
        failure = filesGone();
      }
    } catch (RuntimeException | Error e) {
      // (An OutOfMemoryError in the stat, say.) Whether the round is durable where the next open
      // looks is unknown: no one may be told it is, and the store is unusable from now on.
      markBroken(e);
      failure = e;
    }
    int told = 0;
    try {
      if (failure == null && committed) {
        durableSeq = target;
      }
      for (CommitWaiter<?> w : batch) {
        w.finish(failure);
        told++;
      }
      if (failure != null) {
        failAwaiting(failure);
      }
    } catch (RuntimeException | Error e) {
      markBroken(e);
      throw e;
    } finally {
      // Whatever was thrown above: a caller of the batch left waiting, or the round left held,
      // would park every later write and the close for ever.
      for (int i = told; i < batch.size(); i++) {
        batch.get(i).finish(failure != null ? failure : broken);
      }
      releaseRound();
    }
  }

  /** Syncs the last commit to the disk; the failure (which breaks the store), or null. */
  private Throwable syncToDisk() {
    try {
      diskSync.sync();
      return null;
    } catch (SQLException e) {
      broken = e;
      // Committed, but perhaps not on the disk: a reopen finds it there, unless the power failed.
      return StoreErrors.wrapCommit(what, "disk sync on " + name, e);
    } catch (IOException | RuntimeException e) {
      broken = e;
      return StoreErrors.wrapCommit(what, "disk sync on " + name, e);
    } catch (Error e) {
      markBroken(e);
      return e;
    }
  }

  /**
   * Null if the database file is still the one opened (or the store has none to check); otherwise
   * breaks the store, and returns the failure that says so, which is also what its close throws.
   * The commit it follows went to a file the next open will not read (removed) or not to the file
   * it will read (replaced): it MAY be in files someone moved aside, but is not durable where the
   * store lives, so it is a commit whose outcome the store cannot vouch for
   * ({@link FilesReplacedException}, a {@link CommitUnconfirmedException}), never one reported durable.
   *
   * <p>Then, likewise, null if the lock file's path still names the file this process locked (or
   * there is none); otherwise a {@link LockLostException}: the commit is in the database, but
   * another process may own the store now, and act on it.
   */
  private CommitUnconfirmedException filesGone() {
    if (databaseFile == null && lockFile == null) {
      return null;
    }
    Gone known = filesGone.get();
    if (known == null) {
      String change = databaseFile == null ? null : databaseFile.change();
      String lockChange = change != null || lockFile == null ? null : lockFile.change();
      if (change == null && lockChange == null) {
        return null;
      }
      Gone found = change != null ? new Gone(databaseGone(change), false) : new Gone(lockGone(lockChange), true);
      if (filesGone.compareAndSet(null, found)) {
        LOG.error("Idem {} {}: {}", what, name, found.reason().getMessage());
      }
      known = filesGone.get();
      markBroken(known.reason());
    }
    JournalException reason = known.reason();
    return known.lockFile()
        ? new LockLostException(what + " commit on " + name + " is not confirmed: " + reason.getMessage(), reason)
        : new FilesReplacedException(what + " commit on " + name + " is not durable: " + reason.getMessage(), reason);
  }

  private JournalException databaseGone(String change) {
    return new JournalException("the " + what + "'s files were removed or replaced while it"
        + " was open: " + databaseFile.path() + " is no longer the file it opened (" + change + "; a deploy script"
        + " or a temp-file cleaner?). What was written since it was opened may be lost (operations begun or updated,"
        + " deliveries accepted): it went to the removed file, and the next open at " + databaseFile.path()
        + " will not find it. The " + what + " refuses every call from now on. Stop the app, put the files back"
        + " (or restore them from a backup) before opening it again, and reconcile what was pending or uncertain"
        + " with the other side: an open that finds no files starts an empty " + what, null);
  }

  private JournalException lockGone(String change) {
    return new JournalException("the " + what + "'s lock file " + lockFile.path() + " was removed or replaced while"
        + " the " + what + " was open (" + change + "; a temp-file cleaner, or a script clearing \"stale\" lock"
        + " files?): the lock this process holds is on the removed file and keeps nobody out, so another process"
        + " may own the " + what + " now, and may already have taken this process's in-flight work back to do it"
        + " again. The " + what + " refuses every call from now on, so that this process acts on it no more. Stop"
        + " this app and any other process that opened " + name + ", then open it in one process only (the open"
        + " creates the lock file again), and check what was in flight with the other side. Never remove the lock"
        + " files of a running app", null);
  }

  /**
   * After a failed round (the store is broken): ends the wait of every caller listed meanwhile,
   * with that failure. Under the statement lock, so that every unit that ran before the store was
   * marked broken is listed by now, and every later one fails before it runs.
   */
  private void failAwaiting(Throwable failure) {
    statementLock.lock();
    try {
      for (CommitWaiter<?> w; (w = awaiting.poll()) != null;) {
        w.finish(failure);
      }
    } finally {
      unlockStatements();
    }
  }

  /**
   * Makes every later commit sync inside SQLite's commit ({@code synchronous=FULL}), and returns
   * once every earlier commit is on the disk: call it before another connection writes the
   * database (the guard's transactional mode, before the app's connection claims), so that no
   * frame of theirs follows a frame of this store's that is not on the disk yet. Records it in the
   * database, so that later opens start with FULL. Cheap once done; nothing to do for a store that
   * never synced outside its lock.
   *
   * @param why for the record and the log, such as "transactional mode"
   * @throws IdempotencyException if the store is closed or broken, or the commit fails
   */
  public void expectOtherWriters(String why) throws IdempotencyException {
    if (othersExpected) {
      return;
    }
    // A SYNC write of no row: it commits (the switch runs in that round, after its commit) once the
    // round before it, with its sync, has ended, so nothing of this store is left unsynced.
    write(Durability.SYNC, null, s -> {
      if (switchToFull == null && !othersExpected) {
        switchToFull = why;
        LOG.info("Idem {} {}: {}: its commits sync inside SQLite's commit (synchronous=FULL) from now on", what,
            name, why);
      }
      return null;
    });
  }

  /**
   * After a commit, under the statement lock: later commits sync inside SQLite's commit. SQLite
   * refuses to change {@code synchronous} inside a transaction, and sqlite-jdbc begins the next one
   * at each commit, so the change runs in auto-commit mode, between two transactions.
   */
  private void commitWithFullSync() throws SQLException {
    connection.setAutoCommit(true);
    try {
      try (Statement st = connection.createStatement()) {
        st.execute("PRAGMA synchronous=FULL");
      }
      syncAfterCommit = false;
      othersExpected = true;
      try {
        // Its own commit, with FULL: in auto-commit mode it waits for the write lock as long as the
        // busy timeout, and cannot fail on an outdated snapshot.
        foreignWriters.record(switchToFull);
      } catch (SQLException e) {
        LOG.warn("Idem {} {}: could not record that other connections write it; the next open will sync outside"
            + " the lock again until it sees them ({})", what, name, e.getMessage());
      }
      switchToFull = null;
    } finally {
      connection.setAutoCommit(false);
    }
  }

  @Override
  public boolean broken() {
    return broken != null;
  }

  private void failIfBroken() throws JournalException {
    checkUsable(null);
  }

  /**
   * {@link StoreErrors#checkUsable}, except for a store whose files were found removed: that is said
   * whole, since a reopen, which cures other failures, would start an empty store (or, for a removed
   * lock file, would make one more owner).
   */
  private void checkUsable(String closedHow) throws JournalException {
    Gone gone = filesGone.get();
    if (gone != null && closedHow == null) {
      throw new JournalException(what + " " + name + " is unusable: " + gone.reason().getMessage(), gone.reason());
    }
    StoreErrors.checkUsable(what, name, closedHow, broken);
  }

  /**
   * Before SQLite's last close, which checkpoints the {@code -wal} file into the database and
   * removes it, and before the open marker is removed: checkpoints every commit now (PASSIVE: it
   * waits for no one; this store is the file's only connection) and, if all of them were copied
   * and synced into the database file, tells {@link #checkpointedAtClose}. A JVM that halts after
   * SQLite removed the {@code -wal} file and before the marker was removed (its shutdown hook gave
   * up on a close another thread was running) then leaves a marker saying the {@code -wal} file held
   * nothing the database lacks, instead of one the next open must take for a lost {@code -wal}
   * file. A checkpoint that fails or copies only part marks nothing: SQLite's close then keeps
   * the {@code -wal} file as well.
   */
  private void markCheckpointed() {
    try {
      connection.setAutoCommit(true); // a checkpoint waits for no transaction of its own connection
      try (Statement st = connection.createStatement();
          java.sql.ResultSet rs = st.executeQuery("PRAGMA wal_checkpoint(PASSIVE)")) {
        // busy, frames in the -wal file, frames checkpointed
        if (rs.next() && rs.getInt(1) == 0 && rs.getInt(2) >= 0 && rs.getInt(2) == rs.getInt(3)) {
          checkpointedAtClose.run();
        } else {
          LOG.debug("Idem {} {}: the close's checkpoint did not copy every frame; the open marker stays as it is",
              what, name);
        }
      }
    } catch (SQLException e) {
      LOG.debug("Idem {} {}: the close's checkpoint failed; the open marker stays as it is ({})", what, name,
          e.toString());
    }
  }

  /**
   * Closes the store: from the moment it is marked closed (under the statement lock) no unit of
   * work starts, and every unit that ran before is committed, then the connection is closed. A
   * unit that ran before the mark and whose caller still waits for its commit is covered by that
   * commit. (Flushing first and marking afterwards let a deferred write slip in between: its
   * caller was told it was written, and the connection's close rolled it back.) Callers that come
   * later get a {@link JournalException} saying the journal is closed, and how.
   *
   * @throws JournalException if the last commit or closing the connection failed, or the database
   *     file was found removed or replaced (now or by an earlier commit round): then what was
   *     journaled since the open is not where the next open looks
   * @throws RuntimeException or {@link Error} that the last commit round met (the store is broken,
   *     its commit unconfirmed), or that a closing step threw (the flusher's shutdown, a disk
   *     sync's close), once every closing step ran, the connection's close among them; the first
   *     failure is thrown, later ones are suppressed on it
   */
  @Override
  public void close(String how) throws IdempotencyException {
    JournalException failure = null;
    long target;
    statementLock.lock();
    try {
      if (closedHow != null) {
        return;
      }
      closedHow = how;
      target = executedSeq;
    } finally {
      unlockStatements();
    }
    Throwable fatal = null;
    if (broken == null) {
      try {
        awaitDurable(target);
      } catch (JournalException e) {
        failure = e;
      } catch (IdempotencyException e) {
        failure = new JournalException(what + " close of " + name + " failed: " + e.getMessage(), e);
      } catch (RuntimeException | Error e) {
        // The last round failed (an OutOfMemoryError in its file check, say): the closing steps
        // below still run, or the flusher, the disk sync and the connection stay open under a
        // store whose next close() returns at once. Thrown once they ran.
        markBroken(e);
        fatal = e;
      }
    }
    statementLock.lock();
    try {
      // Each step on its own: one that throws (a RuntimeException from the flusher's shutdown, a
      // disk sync's close) must not skip the connection's close, or the file stays open in this
      // process and its lock is released under it. The first failure is thrown, later ones ride
      // along suppressed.
      try {
        flusher.shutdownNow();
      } catch (RuntimeException | Error e) {
        fatal = firstOf(fatal, e);
      }
      try {
        session.close();
      } catch (RuntimeException | Error e) {
        fatal = firstOf(fatal, e);
      }
      if (foreignWriters != null) {
        try {
          foreignWriters.close();
        } catch (SQLException e) {
          failure = firstOf(failure, StoreErrors.wrap(what, "close of " + name, e));
        } catch (RuntimeException | Error e) {
          fatal = firstOf(fatal, e);
        }
      }
      if (diskSync != null) {
        try {
          diskSync.close();
        } catch (SQLException | IOException e) {
          failure = firstOf(failure, new JournalException(what + " close of " + name + " failed: " + e, e));
        } catch (RuntimeException | Error e) {
          fatal = firstOf(fatal, e);
        }
      }
      try {
        if (broken != null) {
          try {
            connection.rollback();
          } catch (SQLException alreadyRolledBack) {
            // SQLite may have rolled the transaction back itself when the write failed
          }
        } else if (failure == null && fatal == null && checkpointedAtClose != null && sqlite
            && filesGone() == null) {
          // (Files removed or replaced under the store: the marker at the path is not this
          // process's to vouch for; the close throws below.)
          markCheckpointed();
        }
      } catch (RuntimeException | Error e) {
        fatal = firstOf(fatal, e);
      }
      try {
        connection.close();
      } catch (SQLException e) {
        failure = firstOf(failure, StoreErrors.wrap(what, "close of " + name, e));
      } catch (RuntimeException | Error e) {
        fatal = firstOf(fatal, e);
      }
    } finally {
      unlockStatements();
    }
    // Also after a round that had nothing to commit, and after another failure: a close that
    // returns quietly tells the caller a reopen finds what was journaled, which it will not.
    CommitUnconfirmedException gone;
    try {
      gone = filesGone();
    } catch (RuntimeException | Error e) {
      if (fatal == null) {
        throw e;
      }
      if (e != fatal) {
        fatal.addSuppressed(e);
      }
      gone = null;
    }
    if (gone != null) {
      JournalException closeFailure = new JournalException(what + " close of " + name + ": "
          + gone.getCause().getMessage(), gone.getCause());
      if (failure != null && failure.getCause() != gone.getCause()) {
        closeFailure.addSuppressed(failure); // failed otherwise too; the lost files are what the caller must hear of
      }
      failure = closeFailure;
    }
    if (fatal != null) {
      if (failure != null) {
        fatal.addSuppressed(failure);
      }
      rethrow(fatal);
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** {@code first} if there was one (with {@code later} suppressed), else {@code later}. */
  private static <T extends Throwable> T firstOf(T first, T later) {
    if (first == null) {
      return later;
    }
    if (first != later) {
      first.addSuppressed(later);
    }
    return first;
  }
}
