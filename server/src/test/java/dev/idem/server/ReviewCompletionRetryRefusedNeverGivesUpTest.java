package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.StoredResponse;
import dev.idem.server.support.ForwardingStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review (completion): CompletionRetries promises to give up after one lease period, but the
 * give-up is checked only after an attempt ran and failed. When the store executor refuses the
 * attempt (an app's executor shut down before the guard, or a saturated bounded pool with
 * AbortPolicy), handOver() just schedules the next turn: the retry is handed over every 10 s for as
 * long as the guard lives, logging a warning each time, never giving up.
 */
class ReviewCompletionRetryRefusedNeverGivesUpTest {
  private final VirtualTime time = new VirtualTime();

  private static GuardRequest post() {
    return new GuardRequest("POST", "/v1/charges", null, "application/json", List.of("k-1"), "acct_1",
        GuardRequest.BodyReader.of("{\"amount\":100}".getBytes(StandardCharsets.UTF_8)));
  }

  private static final class FailingCompletions extends ForwardingStore {
    @Override
    public boolean complete(RecordId id, long generation, String owner, Instant now, StoredResponse response,
        Instant expiresAt) {
      throw new IdempotencyStoreException("pool timeout", null);
    }
  }

  @Test
  void retriesTheExecutorRefusesAreNeverGivenUp() throws Exception {
    AtomicInteger retryHandOvers = new AtomicInteger();
    List<GuardEvent> events = new ArrayList<>();
    IdempotencyGuard guard = IdempotencyGuard.builder(new FailingCompletions()).clock(time.clock())
        .scheduler(time.scheduler()).purgeInterval(null).listener(events::add)
        .storeExecutor(r -> {
          if (r.getClass().getName().contains("CompletionRetries")) {
            retryHandOvers.incrementAndGet();
          }
          throw new RejectedExecutionException("executor shut down");
        }).build();
    try {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
      assertThrows(IdempotencyStoreException.class,
          () -> guard.complete(first.claim(), CapturedResponse.json(201, "{}")));
      time.advance(Duration.ofMinutes(5)); // ten leases: long given up, were the bound kept
      int before = retryHandOvers.get();
      time.advance(Duration.ofHours(1));
      assertEquals(before, retryHandOvers.get(),
          "the completion retry is still handed over every 10 s an hour after the one-lease give-up");
    } finally {
      guard.close();
    }
  }
}
