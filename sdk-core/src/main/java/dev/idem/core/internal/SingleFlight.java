package dev.idem.core.internal;

import dev.idem.core.OperationId;
import dev.idem.core.Outcome;
import java.util.concurrent.CompletableFuture;
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

  /** Ends the leader's flight; later callers start a new one (and find the journal's record). */
  public void leave(OperationId id, Ticket ticket) {
    if (ticket.leader()) {
      running.remove(id, ticket.result());
    }
  }
}
