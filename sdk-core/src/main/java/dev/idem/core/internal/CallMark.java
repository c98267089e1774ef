package dev.idem.core.internal;

import java.util.concurrent.CompletableFuture;

/**
 * One synchronous call to the executor, named before it starts, for its caller's cancel
 * ({@link ExecutorLifecycle#markNextCall}, {@link ExecutorLifecycle#cancelCall}). A new one per
 * call: two marks taken on one thread at one depth (a keyed call made between taking a mark and
 * the call it names, through another client on the same executor) are two calls, and a cancel of
 * one never reaches the other, nor does a later call inherit it.
 *
 * <p>Bound to its call when that call starts on {@link #thread} at {@link #depth}
 * ({@link ExecutorLifecycle}'s per-thread stacks), which is the only thread that links it.
 */
public final class CallMark {
  final Thread thread;
  /** 1 for a call made outside any other, 2 for one its transport makes, ... */
  final int depth;
  /** The next mark down the thread's stack of marks waiting for their call, or of bound ones; that thread's only. */
  CallMark below;
  /** Whether its call has started; that thread's only. */
  boolean claimed;
  /** Its handle was closed: a call starting later never takes it. */
  volatile boolean released;
  /** Its caller cancelled it; guarded by the lifecycle's lock. */
  boolean canceled;
  /** What its cancel completes while its call waits for a concurrent execution; guarded by the lifecycle's lock. */
  CompletableFuture<Void> waiting;

  CallMark(Thread thread, int depth) {
    this.thread = thread;
    this.depth = depth;
  }

  @Override
  public String toString() {
    return "CallMark[" + thread.getName() + ", depth " + depth + "]";
  }
}
