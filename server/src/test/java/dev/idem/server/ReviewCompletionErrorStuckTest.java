package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.StoredResponse;
import dev.idem.server.support.ForwardingStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review (completion): complete() now finishes a claim while keeping its lease renewed, and stops
 * the renewals only when the store call returns or throws a RuntimeException. A store call that
 * throws an Error (an OutOfMemoryError encoding a big response, a NoClassDefFoundError or
 * StackOverflowError in a driver) skips stopRenewals(): the lease is renewed for as long as the guard
 * lives, and every retry of the key gets 409 forever. Before, finish() stopped the renewals before
 * the store call, so the lease ran out and a retry went through.
 */
class ReviewCompletionErrorStuckTest {
  private final VirtualTime time = new VirtualTime();

  private static GuardRequest post() {
    return new GuardRequest("POST", "/v1/charges", null, "application/json", List.of("k-1"), "acct_1",
        GuardRequest.BodyReader.of("{\"amount\":100}".getBytes(StandardCharsets.UTF_8)));
  }

  /** Completions throw an Error on the calls numbered in {@code errorOn}, a RuntimeException before it. */
  private static final class ErrorOnComplete extends ForwardingStore {
    final int errorOn;
    final AtomicInteger completes = new AtomicInteger();

    ErrorOnComplete(int errorOn) {
      this.errorOn = errorOn;
    }

    @Override
    public boolean complete(RecordId id, long generation, String owner, Instant now, StoredResponse response,
        Instant expiresAt) {
      int n = completes.incrementAndGet();
      if (n < errorOn) {
        throw new IdempotencyStoreException("pool timeout", null);
      }
      if (n == errorOn) {
        throw new StackOverflowError("driver");
      }
      return super.complete(id, generation, owner, now, response, expiresAt);
    }
  }

  /** What a pool thread does with a task's throwable: the submitter never sees it. */
  private static void poolLike(Runnable r) {
    try {
      r.run();
    } catch (Throwable t) {
      // a ThreadPoolExecutor worker hands it to the uncaught-exception handler and dies
    }
  }

  @Test
  void anErrorFromTheCompletionStoreCallLeavesTheKeyIn409Forever() throws Exception {
    ErrorOnComplete store = new ErrorOnComplete(1);
    IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(ReviewCompletionErrorStuckTest::poolLike).purgeInterval(null).build();
    try {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
      assertThrows(StackOverflowError.class,
          () -> guard.complete(first.claim(), CapturedResponse.json(201, "{\"id\":\"ch_1\"}")));
      time.advance(Duration.ofMinutes(10)); // twenty leases
      Admission a = guard.admit(post());
      assertNotEquals(Admission.Reason.IN_FLIGHT, a instanceof Admission.Respond r ? r.reason() : null,
          "ten minutes later the key is still in flight: the lease of the failed completion is renewed forever");
    } finally {
      guard.close();
    }
  }

  @Test
  void anErrorInABackgroundRetryKillsTheRetriesButNotTheRenewals() throws Exception {
    ErrorOnComplete store = new ErrorOnComplete(2);
    IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(ReviewCompletionErrorStuckTest::poolLike).purgeInterval(null).build();
    try {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
      assertThrows(IdempotencyStoreException.class,
          () -> guard.complete(first.claim(), CapturedResponse.json(201, "{\"id\":\"ch_1\"}")));
      time.advance(Duration.ofMinutes(10));
      Admission a = guard.admit(post());
      assertNotEquals(Admission.Reason.IN_FLIGHT, a instanceof Admission.Respond r ? r.reason() : null,
          "ten minutes later the key is still in flight: the retries died, the renewals never stop");
    } finally {
      guard.close();
    }
  }
}
