package dev.idem.core.spi.poll;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The backoff as a whole, on its own: no clock is involved, only the polls' verdicts. */
class PollBackoffTest {
  private static final Logger LOG = LoggerFactory.getLogger(PollBackoffTest.class);
  private final PollBackoff backoff = new PollBackoff(LOG, "test", Duration.ofSeconds(1), Duration.ofSeconds(60));

  @Test
  void startsOnlineAtTheBaseInterval() {
    assertFalse(backoff.isOffline());
    assertEquals(Duration.ofSeconds(1), backoff.interval());
  }

  @Test
  void eachPollWithoutProgressDoublesTheIntervalUpToTheCap() {
    for (long expected : new long[] {2, 4, 8, 16, 32, 60, 60}) {
      backoff.noProgress("target down", null);
      assertEquals(Duration.ofSeconds(expected), backoff.interval());
    }
    assertTrue(backoff.isOffline());
  }

  @Test
  void onlyTheFirstPollWithoutProgressGoesOfflineSoTheWarnIsLoggedOnce() {
    assertTrue(backoff.noProgress("target down", null), "the first one takes it offline");
    assertFalse(backoff.noProgress("target down", null));
    assertFalse(backoff.noProgress("journal unreadable", null));
  }

  @Test
  void progressResetsTheIntervalAndComesBackOnlineOnce() {
    backoff.noProgress("target down", null);
    backoff.noProgress("target down", null);

    assertTrue(backoff.progressed(), "the first progress brings it back (and logs the INFO)");
    assertFalse(backoff.isOffline());
    assertEquals(Duration.ofSeconds(1), backoff.interval());
    assertFalse(backoff.progressed(), "already online: nothing to log");
  }

  @Test
  void afterComingBackTheNextOutageStartsFromTheBaseAndWarnsAgain() {
    backoff.noProgress("target down", null);
    backoff.noProgress("target down", null);
    backoff.progressed();

    assertTrue(backoff.noProgress("target down again", null));
    assertEquals(Duration.ofSeconds(2), backoff.interval());
  }

  @Test
  void aCapThatIsNotAPowerOfTwoOfTheBaseIsReachedExactly() {
    PollBackoff odd = new PollBackoff(LOG, "test", Duration.ofMillis(300), Duration.ofSeconds(1));
    odd.noProgress("down", null);
    assertEquals(Duration.ofMillis(600), odd.interval());
    odd.noProgress("down", null);
    assertEquals(Duration.ofSeconds(1), odd.interval());
  }

  @Test
  void aBaseEqualToTheCapNeverGrows() {
    PollBackoff flat = new PollBackoff(LOG, "test", Duration.ofSeconds(5), Duration.ofSeconds(5));
    flat.noProgress("down", null);
    assertTrue(flat.isOffline(), "it still reports being offline");
    assertEquals(Duration.ofSeconds(5), flat.interval());
  }
}
