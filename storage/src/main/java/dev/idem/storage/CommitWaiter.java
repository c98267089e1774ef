package dev.idem.storage;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * One caller of a {@link SingleConnectionStore}, from the moment it hands its unit of work over
 * until the unit has run and is as durable as it must be: the one object its thread parks on, so
 * that whoever runs the unit, or the commit round that covers it, wakes exactly that thread, once.
 *
 * <p>Its state moves {@code QUEUED} (the unit waits for the statement lock; absent for a flush,
 * which has no unit) → {@code WAITING} (it ran; it waits for a commit round, and is in the store's
 * list of those who do) → {@code DONE}. A waiting caller may be put on {@code DUTY}: it then runs
 * the next commit round for everyone, instead of one more thread being woken to do it. An
 * interrupted caller does not leave: its unit ran, and the next commit keeps it whether or not the
 * caller waits (see {@code SingleConnectionStore#awaitRound}). The move to {@code DUTY} is
 * compare-and-set, so that duty is given only to a caller whose round has not ended.
 *
 * @param <T> the unit's result
 */
final class CommitWaiter<T> {
  static final int QUEUED = 0;
  static final int WAITING = 1;
  static final int DUTY = 2;
  static final int DONE = 3;

  private static final VarHandle STATE;

  static {
    try {
      STATE = MethodHandles.lookup().findVarHandle(CommitWaiter.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final Thread owner = Thread.currentThread();
  /** The row the unit touches, or null (any row); null for a flush. */
  final Object row;
  /** The unit, or null for a caller that waits for a commit only (a flush). */
  final SqlWork<T> work;
  /** Null for a read; for a write, how durable its result must be. */
  final Function<? super T, Durability> decide;
  private volatile int state;
  /** The sequence number that must be durable before the caller returns; set before it is listed. */
  long seq;
  /**
   * The sequence number of the unit's own write, or 0 (a read, a flush): once a round made it
   * durable, its caller is told it was written, whatever broke the store since. Set under the
   * statement lock, before the caller reads it.
   */
  long wrote;
  /** Set before DONE. */
  T result;
  /** Why the unit or its commit failed, or null; set before DONE. */
  Throwable failure;

  CommitWaiter(Object row, SqlWork<T> work, Function<? super T, Durability> decide, int state) {
    this.row = row;
    this.work = work;
    this.decide = decide;
    this.state = state;
  }

  /** A caller that waits until everything up to {@code seq} is durable, with no unit of its own. */
  static CommitWaiter<Void> forSeq(long seq) {
    CommitWaiter<Void> w = new CommitWaiter<>(null, null, null, WAITING);
    w.seq = seq;
    return w;
  }

  int state() {
    return state;
  }

  boolean move(int from, int to) {
    return STATE.compareAndSet(this, from, to);
  }

  /** Ran, and must wait for a commit round (after {@link #seq} was set and it was listed). */
  void waiting() {
    state = WAITING;
  }

  /** Ends the wait; wakes the owner unless the calling thread is the owner. */
  void finish(Throwable why) {
    end(why);
    wake();
  }

  /** Ends the wait without waking the owner: the caller wakes it ({@link #wake}) soon after. */
  void end(Throwable why) {
    if (why != null && failure == null) {
      failure = why;
    }
    state = DONE;
  }

  void wake() {
    if (owner != Thread.currentThread()) {
      LockSupport.unpark(owner);
    }
  }
}
