package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link IdempotencyKey#generate()} draws from a DRBG per thread, in blocks: keys made at once on
 * many threads, and across many blocks of one thread, are all different, all UUIDv7, and their 74
 * random bits never repeat (a block handed out twice, or two threads seeded alike, would).
 */
class IdempotencyKeyThreadsTest {
  @Test
  void keysFromManyThreadsAreUniqueUuidV7s() throws Exception {
    int threads = 8;
    int perThread = 5_000;
    Set<String> keys = ConcurrentHashMap.newKeySet();
    Set<Long> randomLow = ConcurrentHashMap.newKeySet();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        futures.add(pool.submit(() -> {
          for (int i = 0; i < perThread; i++) {
            String k = IdempotencyKey.generate().value();
            UUID u = UUID.fromString(k);
            assertEquals(7, u.version(), k);
            assertEquals(2, u.variant(), k);
            keys.add(k);
            // The low 62 bits are random only: a repeat means bytes were reused.
            randomLow.add(u.getLeastSignificantBits() & 0x3fff_ffff_ffff_ffffL);
          }
          return null;
        }));
      }
      for (Future<?> f : futures) {
        f.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
    }
    assertEquals(threads * perThread, keys.size());
    assertEquals(threads * perThread, randomLow.size());
  }
}
