package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.spi.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The guard's store reads a Location, Content-Location, Link or Refresh it keeps as the client's
 * journal does ({@code RequestSnapshot.redactedHeaderValue}), so a replay, sent to whoever retries
 * with the key, carries no credential the handler's answer held. The values are ones the reviews of
 * that reading found stored in clear (the unit-level cases are sdk-core's
 * UrlHeadersReviewedCasesTest); the header named with U+0130 is kept by the default allowlist (a
 * case-insensitive set) and was redacted before the shared reading folded its name differently.
 */
class UrlHeadersGuardStoreTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private IdempotencyGuard guard;

  @AfterEach
  void close() {
    if (guard != null) {
      guard.close();
    }
  }

  static Stream<Arguments> values() {
    return Stream.of(
        Arguments.of("Refresh", "0 url=/orders/1?access_token=planted-refresh"),
        Arguments.of("Refresh", "0; url='/authors/o'reilly/orders/1?access_token=planted-refresh'"),
        Arguments.of("Link", "</orders?page=1>; rel=\"prev\"; title=\"page < 2?\", "
            + "<https://files.example.test/o/1.pdf?sig=planted-sig&sv=2022-11-02>; rel=\"enclosure\""),
        Arguments.of("Link", "</products/7>; rel=\"item\"; title=\"27\" monitor\", "
            + "<https://cdn.example.test/p/7.pdf?X-Amz-Signature=planted-sig&X-Amz-Expires=300>; rel=\"enclosure\""),
        Arguments.of("LOCAT\u0130ON", "/orders/1?access_token=planted-location"));
  }

  @ParameterizedTest
  @MethodSource("values")
  void anAllowlistedHeadersUrlsAreStoredRedacted(String name, String value) throws Exception {
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null).replayHeaders(Set.of("Location", "Link", "Refresh")).build();
    GuardRequest r = new GuardRequest("POST", "/orders", null, "application/json", List.of("k1"), "alice",
        GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8)));
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(r));
    assertEquals(CompletionResult.STORED, guard.complete(p.claim(),
        new CapturedResponse(201, Map.of(name, List.of(value)), "ok".getBytes(StandardCharsets.UTF_8))));
    StoredResponse stored = store.find(new RecordId("alice", "POST /orders", "k1")).orElseThrow().response().orElseThrow();
    assertEquals(1, stored.headers().size(), "the header is kept: " + stored.headers());
    assertFalse(stored.headers().toString().contains("planted"), "stored in clear: " + stored.headers());
  }
}
