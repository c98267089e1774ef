package dev.idem.storage;

import dev.idem.core.IdempotencyException;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one storage-size meter of the journal, the guard's store and the webhook inbox:
 * {@code idem.storage.size}, in bytes ({@link StorageSize}), tagged {@code store} =
 * {@code journal}, {@code guard} or {@code inbox}. Each module's Micrometer binder registers its
 * store's with one call. The gauge measures when it is read; it reads NaN if the size cannot be
 * measured or the measurement fails (logged at debug). Thread-safe.
 */
public final class StorageSizeGauge {
  /** The meter's name. */
  public static final String NAME = "idem.storage.size";
  private static final Logger LOG = LoggerFactory.getLogger(StorageSizeGauge.class);

  private StorageSizeGauge() {
  }

  /**
   * Registers the gauge of {@code store}'s size on {@code registry}, in place of one registered
   * before for the same {@code store} tag (a store closed and reopened).
   *
   * @param store the {@code store} tag: "journal", "guard" or "inbox"
   */
  public static void register(MeterRegistry registry, String store, StorageSize size) {
    // A store closed and reopened would otherwise be measured no more: see StoreGauges.unbind.
    StoreGauges.unbind(registry, NAME, "store", store);
    Gauge.builder(NAME, size, s -> read(store, s)).tag("store", store).baseUnit("bytes")
        .description("bytes the store takes on disk (SQLite: database and -wal files; PostgreSQL: its tables)")
        .strongReference(true).register(registry);
  }

  private static double read(String store, StorageSize size) {
    try {
      long bytes = size.bytes();
      return bytes < 0 ? Double.NaN : bytes;
    } catch (IdempotencyException | RuntimeException e) {
      LOG.debug("the {} storage-size gauge could not measure: {}", store, e.toString());
      return Double.NaN;
    }
  }
}
