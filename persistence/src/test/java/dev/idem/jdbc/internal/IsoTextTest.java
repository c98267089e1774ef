package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The hand-written parse and text of stored instants and durations give exactly what java.time gives. */
class IsoTextTest {
  /** Stored attempts' instants are written by hand: the text must be Instant.toString's, character for character. */
  @Test
  void instantsAreWrittenExactlyAsInstantToString() {
    Random random = new Random(20261202);
    for (int i = 0; i < 50_000; i++) {
      long seconds = switch (i % 4) {
        case 0 -> random.nextLong(-62_167_219_200L - 1_000, 253_402_300_800L + 1_000); // 0000 to 9999, and edges
        case 1 -> random.nextLong(-100_000_000_000L, 100_000_000_000L); // years beyond, with signs
        default -> 1_700_000_000L + random.nextInt(200_000_000);
      };
      int nanos = switch (i % 5) {
        case 0 -> 0;
        case 1 -> random.nextInt(1000) * 1_000_000;
        case 2 -> random.nextInt(1_000_000) * 1_000;
        default -> random.nextInt(1_000_000_000);
      };
      Instant instant = Instant.ofEpochSecond(seconds, nanos);
      assertEquals(instant.toString(), IsoText.text(instant), instant::toString);
    }
    for (Instant edge : List.of(Instant.EPOCH, Instant.MIN, Instant.MAX, Instant.ofEpochSecond(-62_167_219_200L),
        Instant.ofEpochSecond(-62_167_219_201L, 999_999_999), Instant.ofEpochSecond(253_402_300_799L, 999_999_999),
        Instant.ofEpochSecond(253_402_300_800L), Instant.ofEpochSecond(-1, 1), Instant.ofEpochSecond(0, 100),
        Instant.ofEpochSecond(951_782_400L))) {
      assertEquals(edge.toString(), IsoText.text(edge));
    }
  }

  @Test
  void instantsWrittenByToStringParseBackExactlyAsInstantParse() {
    Random random = new Random(20261201);
    for (int i = 0; i < 20_000; i++) {
      long seconds = switch (i % 4) {
        case 0 -> random.nextLong(-62_167_219_200L, 253_402_300_800L); // years 0000 to 9999
        case 1 -> random.nextLong(-100_000_000_000L, 100_000_000_000L); // years beyond, with signs
        default -> 1_700_000_000L + random.nextInt(200_000_000);
      };
      int nanos = switch (i % 3) {
        case 0 -> 0;
        case 1 -> random.nextInt(1000) * 1_000_000;
        default -> random.nextInt(1_000_000_000);
      };
      String text = Instant.ofEpochSecond(seconds, nanos).toString();
      assertEquals(Instant.parse(text), IsoText.instant(text), text);
    }
  }

  @Test
  void durationsWrittenByToStringParseBackExactlyAsDurationParse() {
    Random random = new Random(7);
    for (int i = 0; i < 20_000; i++) {
      Duration d = switch (i % 3) {
        case 0 -> Duration.ofNanos(random.nextLong(0, 60_000_000_000L));
        case 1 -> Duration.ofMillis(random.nextLong(-10_000_000, 10_000_000));
        default -> Duration.ofSeconds(random.nextInt(100_000));
      };
      String text = d.toString();
      assertEquals(Duration.parse(text), IsoText.duration(text), text);
    }
  }

  @Test
  void otherTextIsParsedOrRefusedExactlyAsJavaTimeDoes() {
    for (String s : List.of("2026-12-01T16:15:19Z", "2026-12-01T16:15:19.1Z", "2026-02-29T00:00:00Z",
        "2024-02-29T23:59:59.999999999Z", "2026-12-31T23:59:60Z", "2026-13-01T00:00:00Z", "2026-12-01T24:00:00Z",
        "2026-12-01T16:15:19.Z", "2026-12-01T16:15:19.1234567890Z", "2026-12-01T16:15:19+01:00",
        "2026-12-01t16:15:19Z", "+12026-12-01T16:15:19Z", "-0001-12-01T16:15:19Z", "2026-1a-01T16:15:19Z",
        "2026-12-01T16:15:19.12a4Z", "")) {
      assertSame(() -> Instant.parse(s), () -> IsoText.instant(s), s);
    }
    for (String s : List.of("PT0S", "PT59.999999999S", "PT60S", "PT1M", "PT-0.5S", "PT.5S", "PT1.S", "PT1.5",
        "PT1.1234567891S", "P1D", "PTS", "pt1s", "PT1a5S", "")) {
      assertSame(() -> Duration.parse(s), () -> IsoText.duration(s), s);
    }
  }

  private static void assertSame(java.util.function.Supplier<Object> expected,
      java.util.function.Supplier<Object> actual, String text) {
    Object want;
    try {
      want = expected.get();
    } catch (DateTimeParseException e) {
      assertThrows(DateTimeParseException.class, actual::get, text);
      return;
    }
    assertEquals(want, actual.get(), text);
  }
}
