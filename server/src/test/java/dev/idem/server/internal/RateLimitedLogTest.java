package dev.idem.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.support.CapturingLogger;
import dev.idem.server.support.CapturingLogger.Line;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

/**
 * A failure that repeats on every request (the guard's store down at thousands of requests per
 * second) is logged once with its stack trace, then at most once per interval as a count with the
 * latest message, and once more when requests succeed again; time comes from the injected clock.
 */
class RateLimitedLogTest {
  private static final Duration INTERVAL = Duration.ofSeconds(60);
  private final SettableClock clock = new SettableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final CapturingLogger logger = new CapturingLogger();
  private final RateLimitedLog log = new RateLimitedLog(logger, "Store unavailable; answering 503", INTERVAL, clock);

  @Test
  void theFirstFailureIsLoggedWithItsStackTraceAndTheRestOfTheIntervalOnlyCounted() {
    IdempotencyStoreException first = down("connection refused 1");
    log.failed(first);
    for (int i = 2; i <= 5000; i++) {
      clock.plus(Duration.ofMillis(10));
      log.failed(down("connection refused " + i));
    }

    List<Line> lines = logger.lines();
    assertEquals(1, lines.size(), lines.toString());
    assertEquals(Level.ERROR, lines.get(0).level());
    assertEquals("Store unavailable; answering 503", lines.get(0).message());
    assertSame(first, lines.get(0).throwable());
  }

  @Test
  void aFailureOnceTheIntervalPassedSummarizesTheCountedOnesWithTheLatestMessage() {
    log.failed(down("refused 0"));
    clock.plus(Duration.ofSeconds(1));
    for (int i = 1; i <= 99; i++) {
      log.failed(down("refused " + i));
    }
    clock.plus(INTERVAL); // 61 s after the first line
    log.failed(down("refused 100"));
    clock.plus(Duration.ofSeconds(1));
    log.failed(down("refused 101"));

    List<Line> lines = logger.lines();
    assertEquals(2, lines.size(), lines.toString());
    Line summary = lines.get(1);
    assertEquals(Level.ERROR, summary.level());
    assertNull(summary.throwable(), "the stack trace was logged with the first line");
    assertTrue(summary.message().startsWith("Store unavailable; answering 503: 100 more times in PT1M1S"),
        summary.message());
    assertTrue(summary.message().contains("latest: " + IdempotencyStoreException.class.getName() + ": refused 100"),
        summary.message());
  }

  @Test
  void aLongOutageCostsOneLinePerInterval() {
    IdempotencyStoreException refused = down("refused");
    for (int second = 0; second < 3600; second++) {
      for (int i = 0; i < 10; i++) {
        log.failed(refused);
      }
      clock.plus(Duration.ofSeconds(1));
    }

    assertEquals(60, logger.lines().size());
  }

  @Test
  void successAfterTheIntervalReportsTheCountedFailuresAndTheNextOutageStartsWithAStackTrace() {
    log.failed(down("refused 0"));
    log.failed(down("refused 1"));
    log.failed(down("refused 2"));
    log.succeeded();
    assertEquals(1, logger.lines().size(), "within the interval a success does not log: " + logger.lines());

    clock.plus(INTERVAL);
    log.succeeded();
    log.succeeded();

    List<Line> lines = logger.lines();
    assertEquals(2, lines.size(), lines.toString());
    assertEquals(Level.WARN, lines.get(1).level());
    assertTrue(lines.get(1).message().startsWith("Store unavailable; answering 503: 2 more times in PT0S"),
        lines.get(1).message());
    assertTrue(lines.get(1).message().contains("refused 2"), lines.get(1).message());

    clock.plus(Duration.ofSeconds(1));
    IdempotencyStoreException next = down("refused again");
    log.failed(next);
    assertEquals(3, logger.lines().size());
    assertSame(next, logger.lines().get(2).throwable());
  }

  @Test
  void successesWithoutFailuresLogNothing() {
    for (int i = 0; i < 1000; i++) {
      log.succeeded();
      clock.plus(INTERVAL);
    }
    assertEquals(List.of(), logger.lines());
  }

  @Test
  void anIsolatedFailureEachIntervalIsLoggedWithItsStackTrace() {
    for (int i = 0; i < 3; i++) {
      log.failed(down("refused " + i));
      clock.plus(INTERVAL);
    }
    List<Line> lines = logger.lines();
    assertEquals(3, lines.size());
    lines.forEach(l -> assertTrue(l.throwable() != null, l.toString()));
  }

  /** A wall clock stepped back does not mute the log for as long as the step. */
  @Test
  void aClockSteppedBackDoesNotSilenceTheLog() {
    log.failed(down("refused 0"));
    clock.plus(Duration.ofHours(-1));
    log.failed(down("refused 1"));

    assertEquals(2, logger.lines().size(), logger.lines().toString());
  }

  /** A failure that is not an error (a call tried again) logs its lines at the level given. */
  @Test
  void theLinesComeAtTheLevelGiven() {
    RateLimitedLog warn = new RateLimitedLog(logger, "Tried again", INTERVAL, clock, Level.WARN);
    warn.failed(down("refused 0"));
    warn.failed(down("refused 1"));
    clock.plus(INTERVAL);
    warn.failed(down("refused 2"));

    List<Line> lines = logger.lines();
    assertEquals(2, lines.size(), lines.toString());
    lines.forEach(l -> assertEquals(Level.WARN, l.level(), l.toString()));
    assertTrue(lines.get(0).throwable() != null);
  }

  private static IdempotencyStoreException down(String message) {
    return new IdempotencyStoreException(message, null);
  }

  /** A clock a test moves by hand, also backwards (as a wall clock may step). */
  private static final class SettableClock extends Clock {
    private Instant now;

    SettableClock(Instant start) {
      this.now = start;
    }

    synchronized void plus(Duration d) {
      now = now.plus(d);
    }

    @Override
    public synchronized Instant instant() {
      return now;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      throw new UnsupportedOperationException();
    }
  }
}
