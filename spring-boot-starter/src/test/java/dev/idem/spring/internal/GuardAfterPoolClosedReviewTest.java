package dev.idem.spring.internal;

import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.server.GuardRequest;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.spi.Admission;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review: the starter's guards share one store pool that {@link GuardFactory#destroy()} shuts down
 * after closing the guards it made. The filter makes a handler's guard on first use
 * ({@code GuardFilter.guarded}, {@code computeIfAbsent} at request time for a handler it did not see
 * at startup), and {@link GuardFactory#guard} still builds one after destroy(): an open guard on a
 * pool that is shut down. It claims operations whose lease renewals the pool refuses
 * (RejectedExecutionException, logged as an error every renewal period, the claim marked lost), and
 * nothing ever closes it: destroy() already ran, so its timer thread ({@code idem-guard-leases}) lives
 * on for the JVM's life.
 */
class GuardAfterPoolClosedReviewTest {
  @Test
  void aGuardAskedForAfterTheFactoryClosedIsNotAnOpenGuardOnAClosedPool() throws Exception {
    GuardFactory factory = new GuardFactory(new InMemoryIdempotencyStore(), "Idempotency-Key", Duration.ZERO, null,
        List.of());
    GuardFactory.Settings own = new GuardFactory.Settings(Duration.ofHours(48), 422, true, false);
    factory.destroy(); // the context closes

    IdempotencyGuard late;
    try {
      late = factory.guard(own);
    } catch (IllegalStateException refused) {
      return; // refused: fine
    }
    try {
      Admission a = late.admit(new GuardRequest("POST", "/refunds", null, "application/json", List.of("k-1"), "alice",
          GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8))));
      fail("a guard made after GuardFactory.destroy() shut the shared store pool down admitted a request ("
          + a.getClass().getSimpleName() + "): its lease renewals are refused by the closed pool, and no one closes"
          + " the guard or its timer thread");
    } catch (IllegalStateException closed) {
      // a closed guard: fine
    } finally {
      late.close(); // the test's own cleanup; the starter never does this
    }
  }
}
