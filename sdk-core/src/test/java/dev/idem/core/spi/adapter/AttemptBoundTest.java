package dev.idem.core.spi.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.spi.RequestSnapshot;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class AttemptBoundTest {
  private static final RequestSnapshot NO_TIMEOUT = RequestSnapshot.builder("POST", URI.create("http://h/x")).build();
  private static final RequestSnapshot OWN = NO_TIMEOUT.toBuilder().timeout(Duration.ofMillis(700)).build();

  @Test
  void theRequestsOwnTimeoutComesFirstThenTheTransportsThenThePolicysThen30Seconds() {
    assertEquals(Duration.ofMillis(700), AttemptBound.of(OWN, Duration.ofSeconds(5), Duration.ofSeconds(9)));
    assertEquals(Duration.ofSeconds(5), AttemptBound.of(NO_TIMEOUT, Duration.ofSeconds(5), Duration.ofSeconds(9)));
    assertEquals(Duration.ofSeconds(9), AttemptBound.of(NO_TIMEOUT, null, Duration.ofSeconds(9)));
    assertEquals(Duration.ofSeconds(30), AttemptBound.of(NO_TIMEOUT, null, null));
    assertEquals(AttemptBound.DEFAULT, AttemptBound.fallback(null, null));
  }
}
