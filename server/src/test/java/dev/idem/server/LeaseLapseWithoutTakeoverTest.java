package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.spi.StoredRecord;
import dev.idem.server.support.ForwardingStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression test for a defect found by review, described as it was; fixed: the stores now fence renewal and completion by generation and owner only ({@code IdempotencyStore.complete}).
 *
 * <p>A claim whose lease lapsed while nobody took it over is still the only claim on its record: the
 * store's fence (generation and owner token, both unchanged, since a takeover bumps the generation
 * and every claim has its own token) already proves that no other handler ran. Yet the guard's
 * stores refuse a renewal or completion once {@code lease_until <= now}
 * ({@code InMemoryIdempotencyStore.update}, {@code JdbcIdempotencyStore.RENEW/COMPLETE}). So an
 * ordinary store blip (two missed renewals, about 20 s with the default 30 s lease, such as a
 * PostgreSQL fail-over) or a long GC pause turns a handler that already made its effect into:
 * its answer thrown away, the client told 409 "claim expired, retry", and the retry taking the
 * record over and running the handler a second time. Storing the completion (fenced by generation
 * and owner only) would have answered the retry with a replay.
 */
class LeaseLapseWithoutTakeoverTest {
  private final VirtualTime time = new VirtualTime();
  private volatile boolean storeDown;
  private final ForwardingStore store = new ForwardingStore() {
    @Override
    public boolean renew(RecordId id, long generation, String owner, Instant now, Instant leaseUntil) {
      if (storeDown) {
        throw new IdempotencyStoreException("connection refused (fail-over in progress)", null);
      }
      return real.renew(id, generation, owner, now, leaseUntil);
    }
  };
  private final IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock())
      .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();
  private final AtomicInteger effects = new AtomicInteger();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest charge() {
    return new GuardRequest("POST", "/charges", null, "application/json", List.of("k-charge"), "alice",
        GuardRequest.BodyReader.of("{\"amount\":500}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aHandlerWhoseLeaseLapsedWithoutATakeoverIsNotRunAgainByTheRetry() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(charge()));
    effects.incrementAndGet(); // the handler charges the card

    storeDown = true; // the guard's store fails over while the handler waits on its payment provider
    time.advance(Duration.ofSeconds(25)); // the renewals at 10 s and 20 s fail
    storeDown = false;
    time.advance(Duration.ofSeconds(6)); // the store is back; the renewal at 30 s finds the lease ended at 30 s

    StoredRecord record = store.find(new RecordId("alice", "POST /charges", "k-charge")).orElseThrow();
    assertEquals(first.claim().generation(), record.generation(), "nobody took the claim over");

    CompletionResult result = guard.complete(first.claim(),
        new CapturedResponse(201, Map.of("Content-Type", List.of("application/json")),
            "{\"charge\":\"ch_1\"}".getBytes(StandardCharsets.UTF_8)));

    // Today: REFUSED, so the adapter answers 409 "the claim expired; retry", and the retry...
    Admission retry = guard.admit(charge());
    if (retry instanceof Admission.Proceed) {
      effects.incrementAndGet(); // ...runs the handler again: a second charge
    }
    assertEquals(1, effects.get(), "the charge ran twice for one key, though no other request ever held it"
        + " (completion was " + result + ")");
    assertNotEquals(CompletionResult.REFUSED, result, "the completion was refused though the claim was never taken over");
  }

  /**
   * The same on the SQLite store (its COMPLETE statement has {@code AND lease_until > ?}), after a
   * stop-the-world pause of 31 s in the handler: no renewal ran, nobody came for the key.
   */
  @Test
  void onSqliteAHandlerPausedPastItsLeaseWithoutATakeoverIsNotRunAgainByTheRetry(@TempDir Path dir) throws Exception {
    VirtualTime t = new VirtualTime();
    try (JdbcIdempotencyStore sqlite = JdbcIdempotencyStore.sqlite(dir.resolve("idem.db"));
        IdempotencyGuard g = IdempotencyGuard.builder(sqlite).clock(t.clock()).scheduler(t.scheduler())
            .storeExecutor(Runnable::run).purgeInterval(null).build()) {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, g.admit(charge()));
      int runs = 1;
      t.jump(Duration.ofSeconds(31)); // a GC pause / VM suspension inside the handler

      CompletionResult result = g.complete(first.claim(),
          new CapturedResponse(201, Map.of(), "{\"charge\":\"ch_1\"}".getBytes(StandardCharsets.UTF_8)));
      if (g.admit(charge()) instanceof Admission.Proceed) {
        runs++;
      }
      assertEquals(1, runs, "the charge ran twice for one key, though no other request ever held it (completion was "
          + result + ")");
    }
  }
}
