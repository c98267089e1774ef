package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The backoff as a whole, on its own: no clock is involved, only the polls' verdicts. */
class PollBackoffTest {
  private final PollBackoff backoff = new PollBackoff(Duration.ofSeconds(1), Duration.ofSeconds(60));

  @Test
  void startsOnlineAtTheBaseInterval() {
    assertFalse(backoff.isOffline());
    assertEquals(Duration.ofSeconds(1), backoff.interval());
  }

  @Test
  void eachPollWithoutProgressDoublesTheIntervalUpToTheCap() {
    for (long expected : new long[] {2, 4, 8, 16, 32, 60, 60}) {
      backoff.noProgress("target down");
      assertEquals(Duration.ofSeconds(expected), backoff.interval());
    }
    assertTrue(backoff.isOffline());
  }

  @Test
  void onlyTheFirstPollWithoutProgressGoesOfflineSoTheWarnIsLoggedOnce() {
    assertTrue(backoff.noProgress("target down"), "the first one takes it offline");
    assertFalse(backoff.noProgress("target down"));
    assertFalse(backoff.noProgress("journal unreadable"));
  }

  @Test
  void progressResetsTheIntervalAndComesBackOnlineOnce() {
    backoff.noProgress("target down");
    backoff.noProgress("target down");

    assertTrue(backoff.progressed(), "the first progress brings it back (and logs the INFO)");
    assertFalse(backoff.isOffline());
    assertEquals(Duration.ofSeconds(1), backoff.interval());
    assertFalse(backoff.progressed(), "already online: nothing to log");
  }

  @Test
  void afterComingBackTheNextOutageStartsFromTheBaseAndWarnsAgain() {
    backoff.noProgress("target down");
    backoff.noProgress("target down");
    backoff.progressed();

    assertTrue(backoff.noProgress("target down again"));
    assertEquals(Duration.ofSeconds(2), backoff.interval());
  }

  @Test
  void aCapThatIsNotAPowerOfTwoOfTheBaseIsReachedExactly() {
    PollBackoff odd = new PollBackoff(Duration.ofMillis(300), Duration.ofSeconds(1));
    odd.noProgress("down");
    assertEquals(Duration.ofMillis(600), odd.interval());
    odd.noProgress("down");
    assertEquals(Duration.ofSeconds(1), odd.interval());
  }

  @Test
  void aBaseEqualToTheCapNeverGrows() {
    PollBackoff flat = new PollBackoff(Duration.ofSeconds(5), Duration.ofSeconds(5));
    flat.noProgress("down");
    assertTrue(flat.isOffline(), "it still reports being offline");
    assertEquals(Duration.ofSeconds(5), flat.interval());
  }
}
