package dev.idem.server;

import dev.idem.core.fingerprint.Fingerprint;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A held operation: the fencing generation and owner token of one handler run. Its lease is
 * renewed in the background until {@link IdempotencyGuard#complete} or
 * {@link IdempotencyGuard#abandon}.
 *
 * <p>Thread-safe.
 */
public final class Claim {
  /**
   * The request attribute under which the Servlet and JDK HttpServer adapters hand the handler its
   * claim, so that it can read {@link #operationId()}.
   */
  public static final String ATTRIBUTE = "dev.idem.server.Claim";

  private final IdempotencyGuard.Prepared p;
  private final Instant claimedAt;
  private final long generation;
  private final String owner;
  private final StoragePolicy storagePolicy;
  private final AtomicBoolean finished = new AtomicBoolean();
  private volatile boolean leaseLost;
  private volatile Throwable renewalFailure;
  private volatile Runnable stopRenewals;

  Claim(IdempotencyGuard.Prepared p, Instant claimedAt, long generation, String owner, StoragePolicy storagePolicy) {
    this.p = Objects.requireNonNull(p, "p");
    this.claimedAt = claimedAt;
    this.generation = generation;
    this.owner = Objects.requireNonNull(owner, "owner");
    this.storagePolicy = Objects.requireNonNull(storagePolicy, "storagePolicy");
  }

  /** @return the operation held */
  public RecordId id() {
    return p.id();
  }

  /**
   * A stable id for the operation, the same for every request with its key: see
   * {@link RecordId#operationId()}.
   *
   * @return the operation id
   */
  public String operationId() {
    return p.id().operationId();
  }

  /** @return the fencing generation: 1 for the first claim, one more per takeover */
  public long generation() {
    return generation;
  }

  /** @return the fingerprint of the claiming request */
  public Fingerprint fingerprint() {
    return p.fingerprint();
  }

  /**
   * True while the lease is in doubt: the last renewal failed (the store could not be reached; the
   * lease may still be live until it runs out, and renewals go on), or found the claim gone (its
   * lease ran out, and perhaps another request took the operation over; no renewal follows). A
   * later renewal that succeeds clears it, since the lease is then held again.
   *
   * <p>Completion does not read it: the store decides, and {@link IdempotencyGuard#complete}
   * returns {@link dev.idem.server.spi.CompletionResult#REFUSED} only if, by then, the lease has
   * run out or another request took the operation over, which is certain once a renewal found the
   * claim gone.
   *
   * @return whether the lease is in doubt or known to be lost
   */
  public boolean leaseLost() {
    return leaseLost;
  }

  String route() {
    return p.route();
  }

  Instant claimedAt() {
    return claimedAt;
  }

  String owner() {
    return owner;
  }

  Duration retention() {
    return p.policy().retention();
  }

  StoragePolicy storagePolicy() {
    return storagePolicy;
  }

  void lost(Throwable cause) {
    leaseLost = true;
    if (cause != null) {
      renewalFailure = cause;
    }
  }

  /** A renewal succeeded: the lease is held again, whatever earlier ones met. */
  void renewed() {
    renewalFailure = null;
    leaseLost = false;
  }

  /** @return what the last renewal failed with, if it failed with an exception; else null */
  Throwable renewalFailure() {
    return renewalFailure;
  }

  /**
   * Sets what stops the lease renewals when the claim finishes, and runs it at once if the claim
   * already has: either way it runs (perhaps twice: it is idempotent), never neither.
   */
  void renewedBy(Runnable stop) {
    stopRenewals = stop;
    if (finished()) {
      stop.run();
    }
  }

  /** Marks the claim finished; false if it already was. Stops renewing. */
  boolean finish() {
    if (!finished.compareAndSet(false, true)) {
      return false;
    }
    Runnable stop = stopRenewals;
    if (stop != null) {
      stop.run();
    }
    return true;
  }

  boolean finished() {
    return finished.get();
  }

  @Override
  public String toString() {
    return "Claim{" + p.id() + ", generation " + generation + (leaseLost ? ", lease lost" : "") + "}";
  }
}
