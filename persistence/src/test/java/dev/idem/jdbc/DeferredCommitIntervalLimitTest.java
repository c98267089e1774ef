package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A deferred commit interval the store cannot schedule its background commit after (it does not
 * fit in nanoseconds: "a thousand years, to mean only durable writes commit") is refused by the
 * builder, naming the setting, instead of failing each deferred write at its first schedule.
 */
class DeferredCommitIntervalLimitTest {
  @Test
  void anIntervalLongerThanTheLongestDelayInNanosecondsIsRefusedNamingTheSetting() {
    JdbcJournal.Builder builder = JdbcJournal.embedded(Path.of("unused"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> builder.deferredCommitInterval(Duration.ofDays(365L * 1000)));
    assertTrue(e.getMessage().contains("deferredCommitInterval"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> builder.deferredCommitInterval(Duration.ofNanos(Long.MAX_VALUE)
        .plusNanos(1)));
    assertDoesNotThrow(() -> builder.deferredCommitInterval(Duration.ofNanos(Long.MAX_VALUE)));
  }
}
