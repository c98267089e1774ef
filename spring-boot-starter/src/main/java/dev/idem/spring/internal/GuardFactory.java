package dev.idem.spring.internal;

import dev.idem.core.spi.Scheduler;
import dev.idem.server.GuardListener;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.KeyScope;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.DisposableBean;

/**
 * Makes the guards of the {@code @Idempotent} handlers whose settings differ from the default
 * guard's (retention, mismatch status, key required, operation scope), all over one store, and
 * closes them at shutdown. Only the default guard purges expired records: one purge covers the
 * whole store. Every guard it makes, the default one too, runs its store calls on one
 * {@link GuardStorePool}, which it shuts down last, after its guards (the default guard, a bean
 * that depends on this one, is closed before it). Thread-safe.
 */
public final class GuardFactory implements DisposableBean {
  /** What sets a guard apart. */
  public record Settings(Duration retention, int mismatchStatus, boolean keyRequired, boolean operationScoped) {}

  private final IdempotencyStore store;
  private final String keyHeader;
  private final Duration inFlightWait;
  private final String instanceId;
  private final GuardListener listener;
  private final Clock clock;
  private final Scheduler scheduler;
  private final Map<Settings, IdempotencyGuard> guards = new ConcurrentHashMap<>();
  private final GuardStorePool storeCalls;
  private volatile boolean sealed;
  private boolean closed; // guarded by this

  /**
   * @param store the store every guard shares
   * @param keyHeader the key header
   * @param inFlightWait how long a repeat waits for the first request
   * @param instanceId the instance's name, or null
   * @param listeners the guard listeners (metrics)
   */
  public GuardFactory(IdempotencyStore store, String keyHeader, Duration inFlightWait, String instanceId,
      List<GuardListener> listeners) {
    this(store, keyHeader, inFlightWait, instanceId, listeners, null, null, new GuardStorePool());
  }

  /**
   * A factory whose guards take their time from {@code clock} and {@code scheduler}, as
   * {@code IdempotencyGuard.Builder} lets any guard, and run their store calls on {@code storeCalls}:
   * for tests, which move time themselves ({@code VirtualTime}) instead of waiting out the 10 s of a
   * lease renewal.
   *
   * @param store the store every guard shares
   * @param keyHeader the key header
   * @param inFlightWait how long a repeat waits for the first request
   * @param instanceId the instance's name, or null
   * @param listeners the guard listeners (metrics)
   * @param clock the guards' clock, or null for the system clock
   * @param scheduler times the guards' renewals and purge, or null for a timer thread per guard
   * @param storeCalls the pool every guard runs its store calls on; {@link #destroy()} closes it
   */
  public GuardFactory(IdempotencyStore store, String keyHeader, Duration inFlightWait, String instanceId,
      List<GuardListener> listeners, Clock clock, Scheduler scheduler, GuardStorePool storeCalls) {
    this.store = store;
    this.keyHeader = keyHeader;
    this.inFlightWait = inFlightWait;
    this.instanceId = instanceId;
    this.listener = GuardListener.all(listeners);
    this.clock = clock;
    this.scheduler = scheduler;
    this.storeCalls = storeCalls;
  }

  /** Ends the startup: a guard made from now on takes no instance identity (its build would end live claims). */
  public void seal() {
    sealed = true;
  }

  /** The default guard, which purges; the caller closes it (it is a bean). */
  public IdempotencyGuard defaultGuard(Settings s) {
    return builder(s).build();
  }

  /**
   * The guard for {@code s}, made once.
   *
   * @throws IllegalStateException once {@link #destroy()} began: a guard made then would renew its
   *     leases on the closed store pool, and no one would close it
   */
  public IdempotencyGuard guard(Settings s) {
    IdempotencyGuard made = guards.get(s);
    return made != null ? made : make(s);
  }

  // Under this, as destroy() sets closed: no guard is made once the factory began to close.
  private synchronized IdempotencyGuard make(Settings s) {
    if (closed) {
      throw new IllegalStateException("the application context is closing: Idem's guards are closed, and none is"
          + " made for a handler first seen now");
    }
    return guards.computeIfAbsent(s, k -> builder(k).purgeInterval(null).build());
  }

  private IdempotencyGuard.Builder builder(Settings s) {
    IdempotencyGuard.Builder b = IdempotencyGuard.builder(store).keyHeader(keyHeader).retention(s.retention())
        .mismatchStatus(s.mismatchStatus()).inFlightWait(inFlightWait).listener(listener).storeExecutor(storeCalls.executor())
        .scope(s.operationScoped() ? KeyScope.CALLER : KeyScope.CALLER_AND_ROUTE);
    if (!s.keyRequired()) {
      b.keyRequiredMethods(Set.of());
    }
    if (clock != null) {
      b.clock(clock);
    }
    if (scheduler != null) {
      b.scheduler(scheduler);
    }
    // A named guard ends the claims its identity left in flight when it is built: only before
    // traffic starts, or it would end live ones of this very run.
    if (instanceId != null && !sealed) {
      b.instanceId(instanceId);
    }
    return b;
  }

  /**
   * Closes the guards it made, then the store pool they share: one wait of at most 5 s in all for a
   * store call still running (a guard given an executor does not wait for it), instead of one per
   * guard.
   */
  @Override
  public void destroy() {
    synchronized (this) {
      closed = true;
    }
    guards.values().forEach(IdempotencyGuard::close);
    guards.clear();
    storeCalls.close();
  }
}
