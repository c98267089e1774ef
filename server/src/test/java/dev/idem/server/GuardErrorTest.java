package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.spi.Admission;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.core.testing.VirtualTime;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Issue 15: an Error in the guard's scheduled jobs ended in the scheduler, unseen, and stopped the
 * job for good: the purge never ran again, and a claim's lease stopped being renewed without the
 * claim knowing. Now the purge reports it ({@link IdempotencyGuard#lastPurgeFailure()}) and keeps
 * its schedule; a renewal marks the claim's lease lost (so its completion is decided safely) and
 * keeps renewing.
 */
class GuardErrorTest {
  static final class InjectedError extends Error {
    InjectedError() {
      super("injected");
    }
  }

  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore real = new InMemoryIdempotencyStore();
  private final AtomicReference<String> failing = new AtomicReference<>();
  private final InjectedError error = new InjectedError();
  private final AtomicInteger calls = new AtomicInteger();

  /** The in-memory store, except that the method named in {@link #failing} throws {@link #error}. */
  private IdempotencyStore store() {
    return (IdempotencyStore) Proxy.newProxyInstance(IdempotencyStore.class.getClassLoader(),
        new Class<?>[] {IdempotencyStore.class}, (proxy, method, args) -> {
          if (method.getName().equals(failing.get())) {
            calls.incrementAndGet();
            throw error;
          }
          try {
            return method.invoke(real, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  @Test
  void anErrorInThePurgeIsReportedAndThePurgeKeepsItsSchedule() {
    failing.set("purgeExpired");
    IdempotencyGuard guard = IdempotencyGuard.builder(store()).clock(time.clock()).scheduler(time.scheduler()).storeExecutor(Runnable::run)
        .purgeInterval(Duration.ofMinutes(10)).build();
    try {
      time.advance(Duration.ofMinutes(10));  // before, the Error came out of the scheduler here
      assertSame(error, guard.lastPurgeFailure().orElseThrow().getCause());
      assertTrue(guard.lastPurgeFailure().get().getMessage().contains("InjectedError"));
      time.advance(Duration.ofMinutes(10));
      assertEquals(2, calls.get(), "the purge ran again at its interval");
      failing.set(null);
      time.advance(Duration.ofMinutes(10));
      assertTrue(guard.lastPurgeFailure().isEmpty(), "and recovers once the store does");
    } finally {
      guard.close();
    }
  }

  @Test
  void anErrorInALeaseRenewalMarksTheClaimAndRenewalsGoOn() throws Exception {
    IdempotencyGuard guard = IdempotencyGuard.builder(store()).clock(time.clock()).scheduler(time.scheduler()).storeExecutor(Runnable::run)
        .purgeInterval(null).build();
    try {
      Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(new GuardRequest("POST", "/orders",
          null, "application/json", List.of("k1"), "alice",
          GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8)))));
      failing.set("renew");
      time.advance(Duration.ofSeconds(10));  // the first renewal meets the Error
      assertTrue(p.claim().leaseLost());
      assertSame(error, p.claim().renewalFailure());
      time.advance(Duration.ofSeconds(10));
      assertEquals(2, calls.get(), "renewals went on");
    } finally {
      guard.close();
    }
  }
}
