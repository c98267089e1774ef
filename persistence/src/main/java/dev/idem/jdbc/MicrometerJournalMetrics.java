package dev.idem.jdbc;

import dev.idem.storage.StorageSizeGauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * The JDBC journal's storage meter, beside the queue meters that
 * {@link dev.idem.core.metrics.MicrometerMetrics} registers for any journal:
 * {@code idem.storage.size} (gauge, bytes, tag {@code store=journal}), what
 * {@link JdbcJournal#storageSize()} measures when the gauge is read; NaN if it cannot be measured.
 * The guard's and the webhook inbox's binders register the same gauge for their stores.
 *
 * <pre>{@code
 * MicrometerJournalMetrics.bind(registry, journal);
 * }</pre>
 */
public final class MicrometerJournalMetrics {
  private MicrometerJournalMetrics() {
  }

  /**
   * Registers the journal's storage-size gauge on {@code registry}. Thread-safe.
   *
   * @param registry where the gauge goes
   * @param journal the journal it measures
   * @throws NullPointerException if an argument is null
   */
  public static void bind(MeterRegistry registry, JdbcJournal journal) {
    Objects.requireNonNull(journal, "journal");
    StorageSizeGauge.register(Objects.requireNonNull(registry, "registry"), "journal", journal::storageSize);
  }
}
