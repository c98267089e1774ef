package dev.idem.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The stated-timeout header caps a wait: only 1 to 9 ASCII digits count; anything else is ignored. */
class TimeoutHeaderTest {
  @Test
  void readsWholeMillisecondsAroundWhitespace() {
    assertEquals(Duration.ofMillis(250), TimeoutHeader.parse(" 250\t"));
    assertEquals(Duration.ZERO, TimeoutHeader.parse("0"));
    assertEquals(Duration.ofMillis(999_999_999), TimeoutHeader.parse("999999999"));
  }

  @Test
  void ignoresWhatIsNotOneToNineAsciiDigits() {
    assertNull(TimeoutHeader.parse(null));
    assertNull(TimeoutHeader.parse(""));
    assertNull(TimeoutHeader.parse("   "));
    assertNull(TimeoutHeader.parse("1234567890"), "ten digits");
    assertNull(TimeoutHeader.parse("-5"));
    assertNull(TimeoutHeader.parse("+5"));
    assertNull(TimeoutHeader.parse("1.5"));
    assertNull(TimeoutHeader.parse("12 3"));
    assertNull(TimeoutHeader.parse("\u0663"), "a non-ASCII digit");
  }
}
