package dev.idem.spring.internal;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.event.IdemListener;
import dev.idem.core.metrics.MicrometerMetrics;
import dev.idem.core.spi.Journal;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.MicrometerJournalMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.util.function.Supplier;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Idem's meters on the app's registry, their gauges reading the journal of the executor in use:
 * the starter's, or the app's own {@code IdempotentExecutor} bean's (which brings its journal; the
 * starter then opens none). Bound once the context's singletons are made, or at the first event if
 * one comes earlier: this listener is one of those the starter's executor collects while it is
 * being made, so it cannot ask for the executor then. Thread-safe.
 */
public final class ExecutorMetrics implements IdemListener, SmartInitializingSingleton {
  private final MeterRegistry registry;
  private final Supplier<IdempotentExecutor> executor;
  private volatile MicrometerMetrics bound;

  /**
   * @param registry the app's registry
   * @param executor the executor in use, looked up when the meters are bound
   */
  public ExecutorMetrics(MeterRegistry registry, Supplier<IdempotentExecutor> executor) {
    this.registry = registry;
    this.executor = executor;
  }

  @Override
  public void afterSingletonsInstantiated() {
    metrics();
  }

  @Override
  public void onEvent(IdemEvent event) {
    metrics().onEvent(event);
  }

  private MicrometerMetrics metrics() {
    MicrometerMetrics m = bound;
    if (m == null) {
      synchronized (this) {
        m = bound;
        if (m == null) {
          Journal journal = executor.get().journal();
          if (journal instanceof JdbcJournal jdbc) {
            MicrometerJournalMetrics.bind(registry, jdbc); // idem.storage.size{store=journal}
          }
          m = MicrometerMetrics.bind(registry, journal, Clock.systemUTC());
          bound = m;
        }
      }
    }
    return m;
  }
}
