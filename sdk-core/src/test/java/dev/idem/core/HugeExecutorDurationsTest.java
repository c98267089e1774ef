package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The executor builder accepts any positive Duration. A "practically forever" value (a server that
 * never forgets keys; a lease nobody should take over) must either be refused by the builder with an
 * IllegalArgumentException naming the setting, or work. It must not build fine and then fail every
 * call with an overflow that names nothing.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class HugeExecutorDurationsTest {
  private static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);
  /** The longest any setting may be. */
  private static final Duration CENTURY = Duration.ofDays(36_525);

  static Stream<Arguments> settings() {
    return Stream.of(
        Arguments.of("leaseFor", (Consumer<IdempotentExecutor.Builder>) b -> b.leaseFor(FOREVER)),
        Arguments.of("serverKeyRetention", (Consumer<IdempotentExecutor.Builder>) b -> b.serverKeyRetention(FOREVER)),
        Arguments.of("maxPendingAge",
            (Consumer<IdempotentExecutor.Builder>) b -> b.serverKeyRetention(CENTURY).maxPendingAge(FOREVER)),
        Arguments.of("the longest allowed",
            (Consumer<IdempotentExecutor.Builder>) b -> b.leaseFor(CENTURY).serverKeyRetention(CENTURY)
                .maxPendingAge(CENTURY)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("settings")
  void refusedNamingTheSettingOrWorks(String setting, Consumer<IdempotentExecutor.Builder> set) throws Exception {
    Harness h;
    try {
      h = new Harness(Harness.POLICY, set);
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage().contains(setting), "refused without naming " + setting + ": " + e);
      return;
    } catch (RuntimeException e) {
      throw new AssertionError("build() failed with " + e + " instead of naming " + setting, e);
    }
    Operation op = Operation.builder("create-order", Requests.order("{}")).build();
    try {
      h.executor.enqueue(op);
      ScriptedTransport t = h.transport(op).then(ScriptedTransport.status(201));
      h.executor.resumePending(Map.of("create-order", ResumeHandler.of(t, o -> {}, f -> {})));
    } catch (RuntimeException e) {
      throw new AssertionError("built with " + setting + "=" + FOREVER + ", then a call failed with " + e, e);
    }
    assertEquals(OperationState.SUCCEEDED, h.state(op));
  }
}
