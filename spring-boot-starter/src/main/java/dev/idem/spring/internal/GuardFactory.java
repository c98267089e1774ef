package dev.idem.spring.internal;

import dev.idem.server.GuardListener;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.KeyScope;
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
 * whole store. Thread-safe.
 */
public final class GuardFactory implements DisposableBean {
  /** What sets a guard apart. */
  public record Settings(Duration retention, int mismatchStatus, boolean keyRequired, boolean operationScoped) {}

  private final IdempotencyStore store;
  private final String keyHeader;
  private final Duration inFlightWait;
  private final String instanceId;
  private final GuardListener listener;
  private final Map<Settings, IdempotencyGuard> guards = new ConcurrentHashMap<>();
  private volatile boolean sealed;

  /**
   * @param store the store every guard shares
   * @param keyHeader the key header
   * @param inFlightWait how long a repeat waits for the first request
   * @param instanceId the instance's name, or null
   * @param listeners the guard listeners (metrics)
   */
  public GuardFactory(IdempotencyStore store, String keyHeader, Duration inFlightWait, String instanceId,
      List<GuardListener> listeners) {
    this.store = store;
    this.keyHeader = keyHeader;
    this.inFlightWait = inFlightWait;
    this.instanceId = instanceId;
    this.listener = GuardListener.all(listeners);
  }

  /** Ends the startup: a guard made from now on takes no instance identity (its build would end live claims). */
  public void seal() {
    sealed = true;
  }

  /** The default guard, which purges; the caller closes it (it is a bean). */
  public IdempotencyGuard defaultGuard(Settings s) {
    return builder(s).build();
  }

  /** The guard for {@code s}, made once. */
  public IdempotencyGuard guard(Settings s) {
    return guards.computeIfAbsent(s, k -> builder(k).purgeInterval(null).build());
  }

  private IdempotencyGuard.Builder builder(Settings s) {
    IdempotencyGuard.Builder b = IdempotencyGuard.builder(store).keyHeader(keyHeader).retention(s.retention())
        .mismatchStatus(s.mismatchStatus()).inFlightWait(inFlightWait).listener(listener)
        .scope(s.operationScoped() ? KeyScope.CALLER : KeyScope.CALLER_AND_ROUTE);
    if (!s.keyRequired()) {
      b.keyRequiredMethods(Set.of());
    }
    // A named guard ends the claims its identity left in flight when it is built: only before
    // traffic starts, or it would end live ones of this very run.
    if (instanceId != null && !sealed) {
      b.instanceId(instanceId);
    }
    return b;
  }

  @Override
  public void destroy() {
    guards.values().forEach(IdempotencyGuard::close);
    guards.clear();
  }
}
