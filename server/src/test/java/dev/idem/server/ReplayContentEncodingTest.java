package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code Content-Encoding} travels with the stored body whatever the replay allowlist says, and is
 * dropped with it from the replay of an over-cap answer (an empty body labelled gzip is no gzip).
 */
class ReplayContentEncodingTest {
  private final VirtualTime time = new VirtualTime();
  private static final byte[] CODED = {0x1f, (byte) 0x8b, 8, 0, 1, 2, 3};

  private static GuardRequest post(String key) {
    return new GuardRequest("POST", "/v1/orders", null, "application/json", List.of(key), "acct_1",
        GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8)));
  }

  private Admission.Respond storeThenReplay(IdempotencyGuard guard, String key, byte[] body) throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post(key)));
    guard.complete(first.claim(), new CapturedResponse(201, Map.of("Content-Type", List.of("application/json"),
        "Content-Encoding", List.of("gzip")), body));
    return assertInstanceOf(Admission.Respond.class, guard.admit(post(key)));
  }

  @Test
  void keptWithTheBodyEvenWhenTheAllowlistOmitsIt() throws Exception {
    try (IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).clock(time.clock())
        .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null)
        .replayHeaders(Set.of("Location")).build()) {
      Admission.Respond replay = storeThenReplay(guard, "k-1", CODED);
      assertEquals(List.of("gzip"), replay.response().headers().get("Content-Encoding"));
      assertArrayEquals(CODED, replay.response().body());
    }
  }

  @Test
  void droppedWithTheBodyOfAnOverCapAnswer() throws Exception {
    try (IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).clock(time.clock())
        .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).maxCapturedBody(4).build()) {
      Admission.Respond replay = storeThenReplay(guard, "k-2", CODED);
      assertNull(replay.response().headers().get("Content-Encoding"));
      assertNull(replay.response().headers().get("Content-Type"));
      assertEquals(0, replay.response().body().length);
    }
  }
}
