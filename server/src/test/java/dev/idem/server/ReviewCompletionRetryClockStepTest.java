package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.StoredResponse;
import dev.idem.server.support.ForwardingStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Review (completion): CompletionRetries bounds its tries by a wall-clock instant (giveUpAt = the
 * clock's now + lease). Set the wall clock back (an NTP step, a VM restored from a snapshot) while
 * the store refuses completions, and the retries, and with them the lease renewals, go on for as
 * long as the step: the key answers 409 for an hour instead of one lease. LeaseRenewals already
 * guards against a clock set back; the give-up bound does not.
 */
class ReviewCompletionRetryClockStepTest {
  private final VirtualTime time = new VirtualTime();
  private final AtomicReference<Duration> step = new AtomicReference<>(Duration.ZERO);
  private final Clock wall = new Clock() {
    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return time.now().plus(step.get());
    }
  };

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
  void aWallClockSetBackKeepsTheKeyInFlightForTheWholeStep() throws Exception {
    IdempotencyGuard guard = IdempotencyGuard.builder(new FailingCompletions()).clock(wall)
        .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();
    try {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
      assertThrows(IdempotencyStoreException.class,
          () -> guard.complete(first.claim(), CapturedResponse.json(201, "{}")));
      step.set(Duration.ofHours(-1)); // NTP steps the clock back an hour
      time.advance(Duration.ofMinutes(5)); // ten leases of real time
      Admission a = guard.admit(post());
      assertInstanceOf(Admission.Proceed.class, a,
          "five minutes (ten leases) after a failed completion the key should no longer be held in flight; got "
              + (a instanceof Admission.Respond r ? r.reason() : a));
    } finally {
      guard.close();
    }
  }
}
