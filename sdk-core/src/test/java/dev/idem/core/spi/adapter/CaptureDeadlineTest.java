package dev.idem.core.spi.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The capture deadline's arithmetic, on made-up nanoTime readings (no clock is read). */
class CaptureDeadlineTest {
  private static final long MS = 1_000_000;

  @Test
  void noTimeoutsMeanNoDeadline() {
    CaptureDeadline d = CaptureDeadline.of(5 * MS, null, 0, null);
    assertSame(CaptureDeadline.NONE, d);
    assertFalse(d.passed(Long.MAX_VALUE));
    assertEquals(Long.MAX_VALUE, d.remainingNanos(0));
    assertSame(CaptureDeadline.NONE, CaptureDeadline.of(5 * MS, Duration.ZERO, 0, null), "a zero read timeout is none");
  }

  @Test
  void theReadTimeoutCountsFromTheHeadersForTheWholeBody() {
    CaptureDeadline d = CaptureDeadline.of(200 * MS, Duration.ofMillis(3000), 0, null);
    assertEquals(3200 * MS, d.nanoTime());
    assertFalse(d.passed(3199 * MS));
    assertTrue(d.passed(3200 * MS));
    assertEquals(100 * MS, d.remainingNanos(3100 * MS));
    assertEquals(0, d.remainingNanos(4000 * MS));
  }

  @Test
  void theAttemptTimeoutBoundsItWithAMarginOfAQuarterAtMost250Ms() {
    // 2 s attempt timeout from 0: stop at 1.75 s (margin capped at 250 ms), before a 3 s read timeout.
    assertEquals(1750 * MS, CaptureDeadline.of(200 * MS, Duration.ofSeconds(3), 0, Duration.ofSeconds(2)).nanoTime());
    // 400 ms attempt timeout: a quarter, 100 ms.
    assertEquals(300 * MS, CaptureDeadline.of(100 * MS, null, 0, Duration.ofMillis(400)).nanoTime());
    // The read timeout is earlier: it wins.
    assertEquals(400 * MS, CaptureDeadline.of(100 * MS, Duration.ofMillis(300), 0, Duration.ofSeconds(10)).nanoTime());
  }

  @Test
  void nanoTimeReadingsMayWrap() {
    long nearTheEnd = Long.MAX_VALUE - 50 * MS;
    CaptureDeadline d = CaptureDeadline.of(nearTheEnd, Duration.ofMillis(100), nearTheEnd, Duration.ofDays(365_000));
    assertFalse(d.passed(nearTheEnd + 99 * MS));
    assertTrue(d.passed(nearTheEnd + 100 * MS));
  }
}
