package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RetryAfterTest {
  private static final Instant NOW = Instant.parse("2026-11-02T10:00:00Z");

  @Test
  void deltaSeconds() {
    assertEquals(Optional.of(Duration.ofSeconds(120)), RetryAfter.parse("120", NOW));
    assertEquals(Optional.of(Duration.ZERO), RetryAfter.parse("0", NOW));
    assertEquals(Optional.of(Duration.ofSeconds(5)), RetryAfter.parse("  5 ", NOW));
  }

  @Test
  void httpDate() {
    assertEquals(Optional.of(Duration.ofSeconds(90)), RetryAfter.parse("Mon, 02 Nov 2026 10:01:30 GMT", NOW));
  }

  @Test
  void dateInThePastMeansNow() {
    assertEquals(Optional.of(Duration.ZERO), RetryAfter.parse("Sun, 06 Nov 1994 08:49:37 GMT", NOW));
    assertEquals(Optional.of(Duration.ZERO), RetryAfter.parse("Mon, 02 Nov 2026 09:59:59 GMT", NOW));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "   ", "soon", "-5", "1.5", "5s", "+5", "0x10", "Mon, 32 Nov 2026 10:00:00 GMT", "Retry-After: 5"})
  void garbageIsIgnored(String value) {
    assertEquals(Optional.empty(), RetryAfter.parse(value, NOW));
  }

  @Test
  void absentIsIgnored() {
    assertEquals(Optional.empty(), RetryAfter.parse(null, NOW));
  }

  @Test
  void hugeValuesAreClampedToOneDay() {
    assertEquals(Optional.of(RetryAfter.MAX), RetryAfter.parse("999999999", NOW));
    assertEquals(Optional.of(RetryAfter.MAX), RetryAfter.parse("99999999999999999999999999999", NOW));
    assertEquals(Optional.of(RetryAfter.MAX), RetryAfter.parse("Fri, 31 Dec 9999 23:59:59 GMT", NOW));
    assertEquals(Optional.of(RetryAfter.MAX), RetryAfter.parse("86401", NOW));
    assertEquals(Optional.of(Duration.ofSeconds(86_400)), RetryAfter.parse("86400", NOW));
  }

  @Test
  void leadingZerosDoNotMakeASmallDelayHuge() {
    // delta-seconds = 1*DIGIT: "0000000005" is five seconds, not "too many digits".
    assertEquals(Optional.of(Duration.ofSeconds(5)), RetryAfter.parse("0000000005", NOW));
    assertEquals(Optional.of(Duration.ZERO), RetryAfter.parse("00000000000000000000", NOW));
  }

  @Test
  void obsoleteHttpDateFormsAreAcceptedAsRfc9110Asks() {
    // NOW is 2026-11-02T10:00:00Z, a Monday; both forms name 10:00:30 that day.
    assertEquals(Optional.of(Duration.ofSeconds(30)), RetryAfter.parse("Monday, 02-Nov-26 10:00:30 GMT", NOW));
    assertEquals(Optional.of(Duration.ofSeconds(30)), RetryAfter.parse("Mon Nov  2 10:00:30 2026", NOW));
  }
}
