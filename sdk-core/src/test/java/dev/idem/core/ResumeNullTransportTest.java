package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * execute(op, null) is refused at once (requireNonNull). resume(id, null) and resumeAsync(id, null)
 * should be refused the same way, before anything is written: nothing can be sent through a null
 * transport, so the operation must not end UNCERTAIN with "an attempt may have taken effect".
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class ResumeNullTransportTest {
  private final Harness h = new Harness(Harness.POLICY, b -> b.circuitBreaker(CircuitBreakerSettings.disabled()));

  @Test
  void resumeWithANullTransportIsRefusedAndChangesNothing() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{}")).build();
    h.executor.enqueue(op);

    Throwable thrown = assertThrows(Throwable.class, () -> h.executor.resume(op.id(), (Transport) null));

    assertEquals(NullPointerException.class, thrown.getClass(), "thrown: " + thrown);
    assertEquals(OperationState.PENDING, h.state(op));
    assertEquals(List.of(), h.record(op).attempts());
  }

  @Test
  void resumeAsyncWithANullTransportIsRefusedAndChangesNothing() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{}")).build();
    h.executor.enqueue(op);

    try {
      h.executor.resumeAsync(op.id(), (AsyncTransport) null);
      h.time.runUntilIdle();
    } catch (NullPointerException expected) {
      // refused at once: fine
    }

    assertEquals(OperationState.PENDING, h.state(op), "attempts " + h.record(op).attempts());
    assertEquals(List.of(), h.record(op).attempts());
  }
}
