package dev.idem.testkit.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import org.junit.jupiter.api.Test;

class HttpDatesTest {
  @Test
  void writesImfFixdateWithATwoDigitDay() {
    // The RFC 9110 example, and a single-digit day that RFC_1123_DATE_TIME would write as "6".
    assertEquals("Sun, 06 Nov 1994 08:49:37 GMT", HttpDates.format(Instant.parse("1994-11-06T08:49:37.999Z")));
  }
}
