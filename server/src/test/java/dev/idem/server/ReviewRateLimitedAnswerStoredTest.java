package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Review: at its defaults ({@code STORE_ALL_BUT_503}) the guard stores and replays for the whole
 * retention (24 h) a 429 Too Many Requests, a 408 Request Timeout or a 425 Too Early: statuses
 * that say the request was not processed and may be retried, and that Idem's own client classifies
 * as transient and retries (DESIGN's table). A handler, or a rate limiter inside the guarded chain,
 * that answers 429 once therefore burns the key: every retry of Idem's client is replayed the 429
 * (without its {@code Retry-After}, which is not on the replay allowlist) until it gives up, and the
 * operation never goes through, though nothing was done. The two halves at their defaults do not
 * deliver.
 */
class ReviewRateLimitedAnswerStoredTest {
  private final VirtualTime time = new VirtualTime();

  private static GuardRequest post(String key) {
    return new GuardRequest("POST", "/v1/charges", null, "application/json", List.of(key), "acct_1",
        GuardRequest.BodyReader.of("{\"amount\":100}".getBytes(StandardCharsets.UTF_8)));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(ints = {429, 408, 425})
  void aNotProcessedAnswerDoesNotBurnTheKey(int status) throws Exception {
    IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).clock(time.clock())
        .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();
    try {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-" + status)));
      // Rate limited before any effect: "slow down, and try again in 1 s".
      guard.complete(first.claim(), new CapturedResponse(status,
          Map.of("Content-Type", List.of("application/json"), "Retry-After", List.of("1")),
          "{\"error\":\"slow down\"}".getBytes(StandardCharsets.UTF_8)));

      time.advance(Duration.ofSeconds(2)); // the client honours Retry-After, then retries
      Admission retry = guard.admit(post("k-" + status));
      if (retry instanceof Admission.Respond r) {
        throw new AssertionError("the retry, 2 s later, is replayed the " + r.response().status()
            + " (headers " + r.response().headers().keySet() + ") instead of running the handler;"
            + " it will be for the 24 h retention");
      }
      assertInstanceOf(Admission.Proceed.class, retry);
    } finally {
      guard.close();
    }
  }
}
