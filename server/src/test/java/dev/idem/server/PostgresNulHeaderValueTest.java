package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Regression test for a defect found by review, described as it was; fixed: the guard stores control characters as spaces ({@code StoredHeaderValue}).
 *
 * <p>PostgreSQL refuses a NUL (U+0000) in a text value. The guard refuses such a character in the
 * operation's identity up front (400, {@code IDENTITY_UNSTORABLE}), but not in the response headers
 * it stores (the {@code headers} TEXT column), although those come from the handler and often echo
 * client input (a {@code Location: /orders/{reference}}; {@code "\u0000"} is a valid JSON string).
 * The live answer goes out (containers write a NUL in a header value as a space), but the
 * completion fails on every try: the guard retries it for one lease period, with the key answering
 * 409, then gives up, the lease runs out, and the client's retry runs the handler a second time.
 * SQLite stores the same value and replays it, so the two stores differ too.
 */
@ExtendWith(PostgresExtension.class)
class PostgresNulHeaderValueTest {
  private final VirtualTime time = new VirtualTime();
  private final AtomicInteger effects = new AtomicInteger();
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
    return new GuardRequest("POST", "/orders", null, "application/json", List.of("k-nul"), "alice",
        GuardRequest.BodyReader.of("{\"ref\":\"a\\u0000b\"}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aHandlersHeaderWithANulIsStoredOrRefusedButNeverLetsTheRetryRunTheHandlerAgain(PgDatabase db) throws Exception {
    store = JdbcIdempotencyStore.postgres(db.dataSource());
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null).build();

    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(order()));
    effects.incrementAndGet(); // the order is created
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Content-Type", List.of("application/json"));
    headers.put("Location", List.of("/orders/a\u0000b")); // the handler echoes the client's reference
    CompletionResult result;
    try {
      result = guard.complete(p.claim(), new CapturedResponse(201, headers, "{}".getBytes(StandardCharsets.UTF_8)));
    } catch (IdempotencyStoreException e) {
      result = null; // the adapters send the answer anyway and the guard retries in the background
    }
    time.advance(Duration.ofMinutes(2)); // the background retries, and the lease

    Admission retry = guard.admit(order());
    if (retry instanceof Admission.Proceed) {
      effects.incrementAndGet();
    }
    assertEquals(1, effects.get(), "one key, two orders: the completion (" + result + ") could not be stored,"
        + " and the retry ran the handler again");
  }
}
