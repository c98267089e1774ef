package dev.idem.testkit.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Fingerprint;
import dev.idem.testkit.Reply;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RecordStoreTest {
  private static final Fingerprint A = new Fingerprint("a".repeat(64));
  private static final Fingerprint B = new Fingerprint("b".repeat(64));
  private static final OperationIdentity ID = new OperationIdentity("anonymous", "POST", "/orders", "k");

  private final RecordStore store = new RecordStore();

  @Test
  void exactlyOneOfManySimultaneousClaimsWins() throws Exception {
    int threads = 16;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 50; round++) {
        OperationIdentity id = new OperationIdentity("anonymous", "POST", "/orders", "k" + round);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<ClaimResult>> results = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
          results.add(pool.submit(() -> {
            go.await();
            return store.claim(id, A);
          }));
        }
        go.countDown();
        int claimed = 0;
        for (Future<ClaimResult> f : results) {
          ClaimResult r = f.get(5, TimeUnit.SECONDS);
          if (r instanceof ClaimResult.Claimed) {
            claimed++;
          } else {
            assertInstanceOf(ClaimResult.InFlight.class, r);
          }
        }
        assertEquals(1, claimed, "round " + round);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void processingThenCompletedThenReplay() {
    ClaimResult.Claimed c = assertInstanceOf(ClaimResult.Claimed.class, store.claim(ID, A));
    assertInstanceOf(ClaimResult.InFlight.class, store.claim(ID, A));
    assertInstanceOf(ClaimResult.Mismatch.class, store.claim(ID, B), "a mismatch is reported even in flight");

    Reply reply = Reply.json(201, "{}");
    store.complete(ID, c.claim(), reply);

    assertEquals(reply, assertInstanceOf(ClaimResult.Replay.class, store.claim(ID, A)).reply());
    assertInstanceOf(ClaimResult.Mismatch.class, store.claim(ID, B));
  }

  @Test
  void releaseForgetsSoTheNextClaimWinsAndStaleClaimsCannotComplete() {
    ClaimResult.Claimed first = assertInstanceOf(ClaimResult.Claimed.class, store.claim(ID, A));
    store.release(ID, first.claim());
    ClaimResult.Claimed second = assertInstanceOf(ClaimResult.Claimed.class, store.claim(ID, A));

    assertThrows(IllegalStateException.class, () -> store.complete(ID, first.claim(), Reply.json(201, "{}")));
    store.complete(ID, second.claim(), Reply.json(201, "{}"));
  }

  @Test
  void countsEffectsPerKeyAndInTotal() {
    assertEquals(1, store.countEffect("k"));
    assertEquals(2, store.countEffect("k"));
    assertEquals(3, store.countEffect(null));
    assertEquals(2, store.effectCount("k"));
    assertEquals(0, store.effectCount("other"));
    assertEquals(3, store.totalEffects());
  }
}
