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
 * Review of 0e735631, the guard's store (IdempotencyGuard.toStored via
 * RequestSnapshot.redactedHeaderValue): values UrlHeaders misreads are stored, and replayed, with
 * their credentials in clear. See the RvUrlh* tests in sdk-core for the unit-level cases.
 */
class RvUrlhGuardStoreTest {
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

  /** Refresh with whitespace between delay and URL, as the HTML standard accepts. */
  @Test
  void anAllowlistedRefreshWithAWhitespaceSeparatorIsStoredRedacted() throws Exception {
    guard = guard(b -> b.replayHeaders(Set.of("Refresh")));
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Refresh", List.of("0 url=/orders/1?access_token=planted-refresh"));
    StoredResponse stored = storeOnce(headers);
    assertFalse(stored.headers().toString().contains("planted"), "stored in clear: " + stored.headers());
  }

  /** A '<' inside a quoted title makes the next link's first query parameter unread. */
  @Test
  void anAllowlistedLinkWithALessThanInATitleIsStoredRedacted() throws Exception {
    guard = guard(b -> b.replayHeaders(Set.of("Link")));
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Link", List.of("</orders?page=1>; rel=\"prev\"; title=\"page < 2?\", "
        + "<https://files.example.test/o/1.pdf?sig=planted-sig&sv=2022-11-02>; rel=\"enclosure\""));
    StoredResponse stored = storeOnce(headers);
    assertFalse(stored.headers().toString().contains("planted"), "stored in clear: " + stored.headers());
  }

  /**
   * Low severity, a regression of this commit: the default allowlist (a CASE_INSENSITIVE_ORDER set)
   * keeps a header named "LOCATİON" (U+0130), and before this commit the guard's own equalsIgnoreCase
   * sent it through redactedUrl; now UrlHeaders.carriesUrls says yes but UrlHeaders.redact's
   * toLowerCase(ROOT) switch does not match, so the URL is stored as is.
   */
  @Test
  void aLocationNamedWithADottedCapitalIIsStillRedacted() throws Exception {
    guard = guard(b -> {});
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("LOCAT\u0130ON", List.of("/orders/1?access_token=planted-location"));
    StoredResponse stored = storeOnce(headers);
    assertFalse(stored.headers().toString().contains("planted"), "stored in clear: " + stored.headers());
  }
}
