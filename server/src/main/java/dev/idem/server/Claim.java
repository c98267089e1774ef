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
  private volatile boolean renewalsStopped;
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

  /** {@return the operation held} */
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

  /** {@return the fencing generation: 1 for the first claim, one more per takeover} */
  public long generation() {
    return generation;
  }

  /** {@return the fingerprint of the claiming request} */
  public Fingerprint fingerprint() {
    return p.fingerprint();
  }

  /**
   * True while the lease is in doubt: the last renewal failed (the store could not be reached; the
   * lease may still be live until it runs out, and renewals go on), or found the claim gone (another
   * request took the operation over after its lease ran out; no renewal follows). A
   * later renewal that succeeds clears it, since the lease is then held again.
   *
   * <p>Completion does not read it: the store decides, and {@link IdempotencyGuard#complete}
   * returns {@link dev.idem.server.spi.CompletionResult#REFUSED} only if, by then, another request
   * took the operation over, which is certain once a renewal found the claim gone. A lease that
   * ran out with nobody taking it over does not refuse it: the generation, which every takeover
   * bumps, is the fence.
   *
   * @return whether the lease is in doubt or known to be lost
   */
  public boolean leaseLost() {
    return leaseLost;
  }

  /**
   * Whether a result with this status is stored under this claim, or releases it, as the storage
   * policy of its route (else the guard's) decides. A transactional run that owns its transaction
   * rolls it back on a release, so that the commit's callbacks do not run for work undone.
   *
   * @param status an HTTP status
   * @return true if such a result is stored and replayed, false if it releases the claim
   */
  public boolean stores(int status) {
    return storagePolicy.stores(status);
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
   * Sets what stops the lease renewals when the claim's renewals stop, and runs it at once if they
   * already have: either way it runs (perhaps twice: it is idempotent), never neither.
   */
  void renewedBy(Runnable stop) {
    stopRenewals = stop;
    if (renewalsStopped) {
      stop.run();
    }
  }

  /** Marks the claim finished; false if it already was. Stops renewing. */
  boolean finish() {
    if (!finishKeepingLease()) {
      return false;
    }
    stopRenewals();
    return true;
  }

  /**
   * Marks the claim finished, so that it is completed or abandoned only once, but leaves its lease
   * renewed: a completion whose store call fails is tried again, and the lease must stay held
   * meanwhile, or a retry of the key would take the claim over and run the handler a second time.
   * The caller calls {@link #stopRenewals()} once the completion has landed or been given up.
   *
   * @return false if the claim already was finished
   */
  boolean finishKeepingLease() {
    return finished.compareAndSet(false, true);
  }

  /** Stops renewing the lease; idempotent. */
  void stopRenewals() {
    renewalsStopped = true;
    Runnable stop = stopRenewals;
    if (stop != null) {
      stop.run();
    }
  }

  boolean finished() {
    return finished.get();
  }

  @Override
  public String toString() {
    return "Claim{" + p.id() + ", generation " + generation + (leaseLost ? ", lease lost" : "") + "}";
  }
}
