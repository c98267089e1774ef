package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The journal's copy of a response: the executor hands every stored response through here, so a
 * response with nothing to hide must come back as the same instance (no copy on the hot path).
 */
class SecretFilterResponseTest {
  private final SecretFilter filter = new SecretFilter(Set.of("X-Merchant-Pin"), Set.of(), Set.of());

  @Test
  void aResponseWithNothingToHideIsReturnedAsItIsAndSoIsItsTransition() {
    ResponseSnapshot plain = new ResponseSnapshot(201, Map.of("Content-Type", List.of("application/json"),
        "Location", List.of("https://api.example.test/v1/orders/1?expand=items"), "Idempotency-Key", List.of("k1")),
        "{}".getBytes(StandardCharsets.UTF_8));
    assertSame(plain, filter.persistable(plain));
    Transition t = Transition.finish(OperationState.SUCCEEDED, Instant.EPOCH, plain, null);
    assertSame(t, filter.persistable(t));
    Transition retry = Transition.retryAt(Instant.EPOCH, Instant.EPOCH, "503");
    assertSame(retry, filter.persistable(retry));
    assertNull(filter.persistable((ResponseSnapshot) null));
  }

  @Test
  void aSecretHeaderIsLeftOutAndTheRestKeptWithStatusAndBody() {
    ResponseSnapshot r = new ResponseSnapshot(200, Map.of("X-Merchant-Pin", List.of("1234"),
        "Set-Cookie", List.of("sid=1"), "X-Request-Id", List.of("r1")), "ok".getBytes(StandardCharsets.UTF_8));
    ResponseSnapshot kept = filter.persistable(r);
    assertEquals(new ResponseSnapshot(200, Map.of("X-Request-Id", List.of("r1")),
        "ok".getBytes(StandardCharsets.UTF_8)), kept);
    Transition t = filter.persistable(Transition.finish(OperationState.FAILED, Instant.EPOCH, r, "HTTP 200?"));
    assertEquals(kept, t.response());
    assertEquals("HTTP 200?", t.reason());
  }
}
