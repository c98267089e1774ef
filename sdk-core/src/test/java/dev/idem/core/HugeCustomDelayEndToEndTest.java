package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A DelayFunction that answers "a very long time" (Duration.ofSeconds(Long.MAX_VALUE), say, or
 * ChronoUnit.FOREVER) is documented to be clamped to maxDelay. The call should retry after maxDelay
 * and succeed.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class HugeCustomDelayEndToEndTest {
  private static final DelayFunction FOREVER = (retry, previous, random) -> Duration.ofSeconds(Long.MAX_VALUE);

  @ParameterizedTest
  @EnumSource(Harness.Driver.class)
  void aHugeCustomDelayRetriesAfterMaxDelay(Harness.Driver driver) throws Exception {
    RetryPolicy policy = Harness.POLICY.toBuilder().delayFunction(FOREVER).build();
    Harness h = new Harness(policy, b -> {});
    Operation op = Operation.builder("create-order", Requests.order("{}")).build();
    ScriptedTransport t = h.transport(op).then(ScriptedTransport.status(503)).then(ScriptedTransport.status(201));

    Outcome out = driver.run(h, op, t);

    assertEquals(201, out.response().status());
    assertEquals(OperationState.SUCCEEDED, h.state(op));
    assertEquals(Duration.ofSeconds(5), out.attempts().get(0).delay());
  }
}
