package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.testing.VirtualTime;
import dev.idem.server.GuardRequest;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.IdempotencyStoreException;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.RecordId;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.spi.StoredRecord;
import dev.idem.server.spi.StoredResponse;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemServerAutoConfiguration;
import dev.idem.spring.internal.GuardFactory;
import dev.idem.spring.internal.GuardStorePool;
import dev.idem.spring.server.Idempotent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * The starter builds one guard per distinct {@code @Idempotent} settings. Each guard used to own a
 * store pool of up to 4 threads: an app with 5 settings ran up to 20 store calls at once (on
 * PostgreSQL, 20 connections of the app's pool, where the guard's Javadoc promises "few"), and a
 * hung store call held the context's shutdown 5 s per guard. The starter's guards now share one
 * pool, closed once after them.
 *
 * <p>Time is the test's: the factory's guards run on a {@link VirtualTime} clock and scheduler, so
 * their first renewals (10 s on, the default lease's third) are due when the test advances it, and
 * the pool's close interrupts hung calls without its 5 s wait (the wait's length is the pool's
 * constant; what this test holds is that there is one pool, and so one wait). The only waits are on
 * the pool's real threads reaching the store, or ending.
 */
class GuardStorePoolTest {
  private static final long WAIT_SECONDS = 30;
  private static final int CLAIMS_PER_GUARD = 2;
  /** The settings of the handlers below other than the default guard's, as the filter reads them. */
  private static final List<GuardFactory.Settings> OWN_SETTINGS = List.of(
      new GuardFactory.Settings(Duration.ofHours(48), 422, true, false),
      new GuardFactory.Settings(Duration.ofHours(24), 409, true, false),
      new GuardFactory.Settings(Duration.ofHours(24), 422, false, false),
      new GuardFactory.Settings(Duration.ofHours(24), 422, true, true));

  @Test
  void theGuardsOfAnAppShareOneBoundedStorePoolClosedInOneBoundedWait(@TempDir Path dir) {
    HangingStore store = new HangingStore();
    VirtualTime time = new VirtualTime();
    new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemServerAutoConfiguration.class))
        .withBean(IdempotencyStore.class, () -> store)
        // The starter's factory, on the test's time and a pool that closes without waiting in real
        // time; the default guard, the filter and the order of shutdown stay the starter's.
        .withAllowBeanDefinitionOverriding(true)
        .withBean("idemGuardFactory", GuardFactory.class, () -> new GuardFactory(store, "Idempotency-Key",
            Duration.ZERO, null, List.of(), time.clock(), time.scheduler(), new GuardStorePool(Duration.ZERO)))
        .withBean(RequestMappingHandlerMapping.class, RequestMappingHandlerMapping::new)
        .withUserConfiguration(Handlers.class)
        .withPropertyValues("idem.directory=" + dir, "idem.client.enabled=false", "idem.outbox.enabled=false")
        .run(context -> {
          GuardFactory factory = context.getBean(GuardFactory.class);
          List<IdempotencyGuard> guards = new ArrayList<>();
          guards.add(context.getBean(IdempotencyGuard.class));
          OWN_SETTINGS.forEach(s -> guards.add(factory.guard(s)));
          assertEquals(5, Set.copyOf(guards).size(), "the app has 5 guards");

          int claims = 0;
          for (IdempotencyGuard guard : guards) {
            for (int i = 0; i < CLAIMS_PER_GUARD; i++) {
              assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-" + claims++)));
            }
          }
          // Each claim's first renewal is due 10 s on: all of them are handed to store threads
          // before advance() returns, and hang there (a stalled connection).
          time.advance(Duration.ofSeconds(10));
          assertTrue(store.entered.tryAcquire(4, WAIT_SECONDS, TimeUnit.SECONDS), "4 renewals reached the store");

          // The guards wait for none of the calls; the pool interrupts the hung ones, once.
          context.close();
          for (Thread t : store.hungOn) {
            t.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
            assertFalse(t.isAlive(), t.getName() + " still runs a store call after the app closed");
          }
          assertEquals(store.hungOn.size(), store.interrupted.get(), "every hung call was interrupted");
          // A guard with a pool of its own starts a thread for each of its claims' renewals when
          // they are handed over, and each of them reaches the store: 10 threads for 10 claims.
          assertTrue(store.hungOn.size() <= 4,
              "the app ran " + store.hungOn.size() + " store calls at once, on as many threads, with " + claims
                  + " claims: each of its 5 guards has a store pool of its own, of up to 4 threads");
        });
  }

  private static GuardRequest post(String key) {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of(key), "alice",
        GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8)));
  }

  /** Five handlers, five settings: the default guard's and four more. */
  @RestController
  static class Handlers {
    @PostMapping("/orders")
    @Idempotent
    String orders() {
      return "order";
    }

    @PostMapping("/refunds")
    @Idempotent(retention = "48h")
    String refunds() {
      return "refund";
    }

    @PostMapping("/payments")
    @Idempotent(mismatchStatus = 409)
    String payments() {
      return "payment";
    }

    @PostMapping("/notes")
    @Idempotent(keyRequired = false)
    String notes() {
      return "note";
    }

    @PostMapping("/transfers/{id}")
    @Idempotent(operation = "transfer")
    String transfers() {
      return "transfer";
    }
  }

  /** The in-memory store, whose lease renewals hang (a stalled connection) until interrupted. */
  static final class HangingStore implements IdempotencyStore {
    private final InMemoryIdempotencyStore real = new InMemoryIdempotencyStore();
    final Semaphore entered = new Semaphore(0);
    final Set<Thread> hungOn = ConcurrentHashMap.newKeySet();
    final AtomicInteger interrupted = new AtomicInteger();
    private final CountDownLatch never = new CountDownLatch(1);

    @Override
    public boolean renew(RecordId id, long generation, String owner, Instant now, Instant leaseUntil) {
      hungOn.add(Thread.currentThread());
      entered.release();
      try {
        never.await(WAIT_SECONDS, TimeUnit.SECONDS);
        return false;
      } catch (InterruptedException e) {
        interrupted.incrementAndGet();
        Thread.currentThread().interrupt();
        throw new IdempotencyStoreException("interrupted", e);
      }
    }

    @Override
    public ClaimAttempt claim(RecordId id, Fingerprint fingerprint, String owner, Instant now, Instant leaseUntil,
        Instant expiresAt) {
      return real.claim(id, fingerprint, owner, now, leaseUntil, expiresAt);
    }

    @Override
    public boolean complete(RecordId id, long generation, String owner, Instant now, StoredResponse response,
        Instant expiresAt) {
      return real.complete(id, generation, owner, now, response, expiresAt);
    }

    @Override
    public boolean release(RecordId id, long generation, String owner) {
      return real.release(id, generation, owner);
    }

    @Override
    public int purgeExpired(Instant now) {
      return real.purgeExpired(now);
    }

    @Override
    public Optional<StoredRecord> find(RecordId id) {
      return real.find(id);
    }

    @Override
    public void close() {
      real.close();
    }
  }
}
