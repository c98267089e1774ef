package dev.idem.storage;

import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;

/**
 * The two rules every Micrometer binder of a store (the guard's, the webhook inbox's, and
 * {@link StorageSizeGauge}) keeps for its gauges, in one place so that they cannot drift apart:
 * a gauge bound again replaces the one bound before, and a cached reading ends when the clock
 * steps back. Stateless; thread-safe.
 */
public final class StoreGauges {
  private StoreGauges() {
  }

  /**
   * Removes from {@code registry} the gauges named {@code name} (and tagged {@code tags}, if given),
   * before a binder registers them again. Micrometer hands back a gauge already registered under
   * the same name and tags, still reading (and strongly holding) the store it was made for: a store
   * closed and reopened, or replaced, bound again, would go unread (NaN) or be read stale.
   *
   * @param tags tag keys and values, in pairs; none to remove every gauge of the name
   */
  public static void unbind(MeterRegistry registry, String name, String... tags) {
    registry.find(name).tags(tags).gauges().forEach(registry::remove);
  }

  /**
   * Whether a reading taken at {@code readAt} no longer serves at {@code now}: one {@code refresh}
   * later, or as soon as the clock stepped back (an NTP correction, a VM restored from a snapshot),
   * which would otherwise have it served, frozen, for as long as the step. Duration.between, unlike
   * readAt.plus(refresh), cannot overflow with a refresh as long as Duration allows.
   */
  public static boolean stale(Instant readAt, Instant now, Duration refresh) {
    Duration since = Duration.between(readAt, now);
    return since.isNegative() || since.compareTo(refresh) >= 0;
  }
}
