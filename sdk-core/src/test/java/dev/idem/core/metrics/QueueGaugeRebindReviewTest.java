package dev.idem.core.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Review (observe): what the client's Micrometer binder reports, against what the journal and the docs say. */
class QueueGaugeRebindReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private static Operation op(String uri, int n) {
    return Operation.builder("notify", Requests.postJson(uri, "{\"n\":" + n + "}")).build();
  }

  /**
   * A journal closed and reopened (or replaced) and bound again on the same registry: the storage
   * gauge of the same journal follows the new one (StorageSizeGauge.register removes the old
   * gauge, and MicrometerWebhookMetrics does the same for its gauges), but Micrometer hands
   * MicrometerMetrics.bind the gauges of the first bind, which keep reading the first journal,
   * strongly referenced: idem.operations.pending reads 0 (or NaN once it is closed) while the
   * journal in use holds a queued operation.
   */
  @Test
  void boundAgainTheQueueGaugesReadTheJournalOfTheLastBind() throws Exception {
    InMemoryJournal first = new InMemoryJournal();
    MicrometerMetrics.bind(registry, first, time.clock());
    first.close();

    InMemoryJournal second = new InMemoryJournal();
    MicrometerMetrics metrics = MicrometerMetrics.bind(registry, second, time.clock());
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(second).clock(time.clock())
        .sleeper(time.sleeper()).scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .listener(metrics).build();
    idem.enqueue(op("https://api.example.com/orders", 1));
    time.advance(Duration.ofSeconds(30));

    assertEquals(1.0, registry.get("idem.operations.pending").gauge().value(),
        "the journal in use holds one PENDING operation");
    assertEquals(30.0, registry.get("idem.operations.pending.oldest.age").gauge().value());
  }
}
