package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

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

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "/v1/exports/1?access_token=t1&page=2|/v1/exports/1?access_token=redacted&page=2",
      "https://b.example.test/f?access%5Ftoken=t1|https://b.example.test/f?access%5Ftoken=redacted",
      "https://b.example.test/f?X-Amz-Signature=s1#frag|https://b.example.test/f?X-Amz-Signature=redacted#frag",
      "https://app.example.test/cb#state=s1&access_token=t1|https://app.example.test/cb#state=s1&access_token=redacted",
      "https://app.example.test/cb#/route?id_token=t1|https://app.example.test/cb#/route?id_token=redacted",
      "//cdn.example.test/f?token=t1|//cdn.example.test/f?token=redacted",
      "https://k1:s1@b.example.test/f|https://redacted@b.example.test/f",
      "https://k1@b.example.test|https://redacted@b.example.test",
  })
  void aStoredUrlHasItsCredentialsRedacted(String url, String stored) {
    assertEquals(stored, filter.redactUrl(url));
  }

  @ParameterizedTest
  @ValueSource(strings = {"https://b.example.test/f", "/v1/orders/1", "https://b.example.test/f?page=2&sort=asc",
      "https://b.example.test/f?access_token=", "https://b.example.test/f?access_token&x=1",
      "https://b.example.test/f?email=a@b.example.test", "https://b.example.test/a//b?q=1", "/a//b@c", "?", "#",
      "https://b.example.test/f#section-2"})
  void aUrlWithoutACredentialIsKeptAsTheSameString(String url) {
    assertSame(url, filter.redactUrl(url));
  }

  @Test
  void anAllowedQueryParameterIsKeptInAStoredUrl() {
    SecretFilter allowing = new SecretFilter(Set.of(), Set.of(), Set.of("session"));
    assertSame("/f?session=weekly", allowing.redactUrl("/f?session=weekly"));
    assertTrue(allowing.isSecretQueryParameter("access_token"));
    assertFalse(allowing.isSecretQueryParameter("session"));
  }
}
