package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The default fingerprint (canonical JSON) tells apart numbers that an app reading a long or a
 * BigDecimal tells apart, so a key reused with one of them is refused, not replayed; numbers that
 * are only spelled differently still match.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class GuardFingerprintNumbersTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private final AtomicInteger effects = new AtomicInteger();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock())
      .scheduler(time.scheduler()).purgeInterval(null).build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest json(String key, String json) {
    return new GuardRequest("POST", "/transfers", null, "application/json", List.of(key), "alice",
        GuardRequest.BodyReader.of(json.getBytes(StandardCharsets.UTF_8)));
  }

  private GuardResponse send(GuardRequest r) throws Exception {
    Admission a = guard.admit(r);
    if (a instanceof Admission.Respond respond) {
      return respond.response();
    }
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, a);
    int n = effects.incrementAndGet();
    byte[] body = ("{\"transfer\":" + n + "}").getBytes(StandardCharsets.UTF_8);
    assertEquals(CompletionResult.STORED, guard.complete(p.claim(),
        new CapturedResponse(201, Map.of("Content-Type", List.of("application/json")), body)));
    return new GuardResponse(201, Map.of(), body);
  }

  /**
   * Two different 64-bit ids (as Jackson reads them into a long, they are different accounts) had
   * one fingerprint through doubles: a key reused for a transfer to another account was answered
   * with the first transfer's replay instead of 422.
   */
  @Test
  void aKeyReusedWithAnotherLargeIntegerIdIsRefusedNotReplayed() throws Exception {
    send(json("k-big-int", "{\"to_account\":9007199254740993,\"amount\":100}"));
    GuardResponse other = send(json("k-big-int", "{\"to_account\":9007199254740992,\"amount\":100}"));

    assertNotEquals("true", other.header(IdempotencyGuard.REPLAYED_HEADER),
        "a transfer to another account must not get the first transfer's stored answer");
    assertEquals(422, other.status(), "the same key with a different payload is refused");
  }

  /** The same with a decimal amount that a BigDecimal handler reads as another value. */
  @Test
  void aKeyReusedWithAnotherPreciseDecimalIsRefusedNotReplayed() throws Exception {
    send(json("k-dec", "{\"amount\":0.1}"));
    GuardResponse other = send(json("k-dec", "{\"amount\":0.10000000000000001}"));

    assertEquals(422, other.status(), "0.1 and 0.10000000000000001 are different amounts to a BigDecimal handler");
  }

  /** Spelling still does not count: the same values, written otherwise, are the same payload. */
  @Test
  void theSameNumbersSpelledOtherwiseAreReplayed() throws Exception {
    send(json("k-same", "{\"to_account\":9007199254740993,\"amount\":0.10}"));
    GuardResponse again = send(json("k-same", "{\"amount\":1.0e-1, \"to_account\":9007199254740993.0}"));

    assertEquals(201, again.status());
    assertEquals(1, effects.get(), "a respelled request is the same operation");
  }
}
