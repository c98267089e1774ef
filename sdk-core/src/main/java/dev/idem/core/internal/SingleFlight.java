package dev.idem.core.internal;

import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.Outcome;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * At most one execution per operation identity in this process: the first caller leads, later
 * callers get the leader's future instead of sending. Thread-safe.
 */
public final class SingleFlight {
  private final ConcurrentHashMap<OperationId, CompletableFuture<Outcome>> running = new ConcurrentHashMap<>();

  /**
   * A caller's place in the flight.
   *
   * @param leader true if this caller must execute, and complete {@code result}
   * @param result the leader's result, shared by every caller
   */
  public record Ticket(boolean leader, CompletableFuture<Outcome> result) {}

  /** Joins the flight for {@code id}, leading it if nobody does. */
  public Ticket join(OperationId id) {
    CompletableFuture<Outcome> mine = new CompletableFuture<>();
    CompletableFuture<Outcome> existing = running.putIfAbsent(id, mine);
    return existing == null ? new Ticket(true, mine) : new Ticket(false, existing);
  }

  /**
   * Ends a flight whose followers must start over ({@link #notBegun}): that of a leader whose begin
   * failed, before anything was journaled or sent for it, rather than hand them a failure that was
   * the leader's own (its payload, refused as another request's under the same key, may not be
   * theirs); or that of a leader cancelled while its execution could still write the journal, once it
   * writes nothing more (its caller went away, theirs did not: they start over from what the journal
   * then holds). Followers already told something else keep it.
   */
  public void leaveNotBegun(OperationId id, Ticket ticket) {
    running.remove(id, ticket.result());
    ticket.result().completeExceptionally(NotBegun.INSTANCE);
  }

  /** True if {@code failure}, as a follower got it from the leader's result, says to start over. */
  public static boolean notBegun(Throwable failure) {
    Throwable t = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    return t == NotBegun.INSTANCE;
  }

  /** The leader's result when its begin failed; never reaches a caller. */
  private static final class NotBegun extends RuntimeException {
    private static final long serialVersionUID = 1L;
    static final NotBegun INSTANCE = new NotBegun();

    private NotBegun() {
      super("the leading execution failed before its begin; start over", null, false, false);
    }
  }

  /**
   * What the followers of an asynchronous leader are told when its caller cancelled it while it was
   * quiet (in its backoff: nothing left to write): the operation is PENDING. An app's call that
   * waited takes it as its answer, as a call made a moment later would find the operation PENDING
   * in its backoff; it sends nothing ahead of that backoff or a server's {@code Retry-After}, and
   * the cancel does no journal work for it. A resume pass or outbox delivery that waited (its first
   * claim fenced on its own read) starts over instead ({@link #leaderCancelled}): it read the
   * operation due and held by no one, and reads it again to see whether it still is.
   *
   * @param cause the cancellation
   */
  public static OperationPendingException cancelledLeader(OperationId id, Throwable cause) {
    return new LeaderCancelled(id, cause);
  }

  /** True if {@code failure}, as a follower got it, is {@link #cancelledLeader}'s. */
  public static boolean leaderCancelled(Throwable failure) {
    Throwable t = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    return t instanceof LeaderCancelled;
  }

  private static final class LeaderCancelled extends OperationPendingException {
    private static final long serialVersionUID = 1L;

    LeaderCancelled(OperationId id, Throwable cause) {
      super("a concurrent execution of " + id + " was cancelled; the operation is PENDING and will be sent again"
          + " with the same key", cause, id, List.of(), null);
    }
  }

  /** Whether an execution of {@code id} runs in this process now (a leader has not left its flight). */
  public boolean isRunning(OperationId id) {
    return running.containsKey(id);
  }

  /** Ends the leader's flight; later callers start a new one (and find the journal's record). */
  public void leave(OperationId id, Ticket ticket) {
    if (ticket.leader()) {
      running.remove(id, ticket.result());
    }
  }
}
