package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.spi.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review of bfc7ff00, the guard's store (IdempotencyGuard.toStored via
 * RequestSnapshot.redactedHeaderValue): values UrlHeaders misreads are stored, and replayed to
 * whoever retries with the key, with their credentials in clear. See RvUrlh2RefreshQuotedApostropheTest
 * and RvUrlh2LinkUnbalancedQuoteTest in sdk-core for the unit-level cases.
 */
class RvUrlh2GuardStoreTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private IdempotencyGuard guard;

  private IdempotencyGuard guard(Consumer<IdempotencyGuard.Builder> settings) {
    IdempotencyGuard.Builder b = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null);
    settings.accept(b);
    return b.build();
  }

  @AfterEach
  void close() {
    if (guard != null) {
      guard.close();
    }
  }

  private StoredResponse storeOnce(Map<String, List<String>> headers) throws Exception {
    GuardRequest r = new GuardRequest("POST", "/orders", null, "application/json", List.of("k1"), "alice",
        GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8)));
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(r));
    assertEquals(CompletionResult.STORED,
        guard.complete(p.claim(), new CapturedResponse(201, headers, "ok".getBytes(StandardCharsets.UTF_8))));
    return store.find(new RecordId("alice", "POST /orders", "k1")).orElseThrow().response().orElseThrow();
  }

  /** A single-quoted Refresh URL whose path holds an apostrophe: the query after it is kept as is. */
  @Test
  void anAllowlistedRefreshWithAnApostropheInItsQuotedUrlIsStoredRedacted() throws Exception {
    guard = guard(b -> b.replayHeaders(Set.of("Refresh")));
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Refresh", List.of("0; url='/authors/o'reilly/orders/1?access_token=planted-refresh'"));
    StoredResponse stored = storeOnce(headers);
    assertFalse(stored.headers().toString().contains("planted"), "stored in clear: " + stored.headers());
  }

  /** An unescaped inch mark in a quoted title hides the next link-value's target. */
  @Test
  void anAllowlistedLinkWithAStrayQuoteInATitleIsStoredRedacted() throws Exception {
    guard = guard(b -> b.replayHeaders(Set.of("Link")));
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Link", List.of("</products/7>; rel=\"item\"; title=\"27\" monitor\", "
        + "<https://cdn.example.test/p/7.pdf?X-Amz-Signature=planted-sig&X-Amz-Expires=300>; rel=\"enclosure\""));
    StoredResponse stored = storeOnce(headers);
    assertFalse(stored.headers().toString().contains("planted"), "stored in clear: " + stored.headers());
  }
}
