package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression test for a defect found by review, described as it was; fixed: the guard stores control characters as spaces ({@code StoredHeaderValue}).
 *
 * <p>The JDBC store keeps a result's headers as text, one {@code name:value} line per value
 * ({@code HeaderCodec}), on the assumption that "a header value cannot hold a line break on the
 * wire". But the guard stores the values as the handler set them, before any container sanitizes
 * them (Tomcat and Jetty write a CR or LF in a header value as a space, so the live answer carries
 * one harmless Location). A Location built from client input (a {@code /orders/{reference}} path, a
 * {@code return_to} URL) that holds a line break is split when read back: its tail becomes a
 * header of its own, replayed to every retry of the key. That bypasses the guard's own rule that
 * secret headers ({@code Set-Cookie}) are never stored, and lets the input add any header to the
 * replay (a session-fixation cookie here). The in-memory store replays the single value, so the two
 * stores disagree too.
 */
class StoredHeaderLineBreakTest {
  @TempDir
  Path dir;

  private final VirtualTime time = new VirtualTime();
  private JdbcIdempotencyStore store;
  private IdempotencyGuard guard;

  @AfterEach
  void close() {
    if (guard != null) {
      guard.close();
    }
    if (store != null) {
      store.close();
    }
  }

  private static GuardRequest order() {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of("k1"), "alice",
        GuardRequest.BodyReader.of("{\"ref\":\"x\"}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aLineBreakInAStoredHeaderValueDoesNotBecomeAReplayedHeaderOfItsOwn() throws Exception {
    store = JdbcIdempotencyStore.sqlite(dir.resolve("idem.db"));
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null).build();

    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(order()));
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Content-Type", List.of("application/json"));
    // The handler echoes a client-chosen reference into Location.
    headers.put("Location", List.of("/orders/x\nSet-Cookie:SESSION=planted-by-client; Path=/"));
    assertEquals(CompletionResult.STORED,
        guard.complete(p.claim(), new CapturedResponse(201, headers, "{}".getBytes(StandardCharsets.UTF_8))));

    GuardResponse replay = assertInstanceOf(Admission.Respond.class, guard.admit(order())).response();

    assertEquals("true", replay.header(IdempotencyGuard.REPLAYED_HEADER));
    assertNull(replay.header("Set-Cookie"), "a Set-Cookie the handler never set is replayed: " + replay.headers());
    assertEquals(1, replay.headers().getOrDefault("Location", List.of()).size(), replay.headers().toString());
  }
}
