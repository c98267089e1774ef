package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.support.ForwardingStore;
import dev.idem.server.spi.StoredRecord;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One slow or hung store call must not hold back the lease renewals of the other claims. The guard
 * used to renew every claim, and purge, from its one scheduler thread, one store call after the
 * other: a renewal stuck on a row lock or a stalled connection stopped every other claim's
 * renewals, their leases ran out, and a client's retry with the same key took its claim over and
 * ran the handler a second time beside the first.
 *
 * <p>Time is virtual; the store calls that hang do so on real threads, so the test waits for what
 * must happen on a latch or semaphore with a timeout, never a sleep.
 */
class RenewalStallTest {
  private static final long WAIT_SECONDS = 5;

  private final VirtualTime time = new VirtualTime();
  private final StallingStore store = new StallingStore();
  // Moves virtual time on a thread of its own: the old guard ran a hung store call on whichever
  // thread ran the due task, and the test must still see what happens to the other claims.
  private final ExecutorService clockThread = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "test-clock");
    t.setDaemon(true);
    return t;
  });
  // The renewal's next turn is timed after its store call returns, on the store's thread: the test
  // waits for it before it moves time on, or the next turn would be timed from the later instant.
  private final Semaphore scheduled = new Semaphore(0);
  private final Scheduler scheduler = (task, delay) -> {
    Future<?> f = time.scheduler().schedule(task, delay);
    scheduled.release();
    return f;
  };
  private IdempotencyGuard guard;

  @AfterEach
  void tearDown() {
    store.unblock.countDown();
    if (guard != null) {
      guard.close();
    }
    clockThread.shutdownNow();
  }

  @Test
  void aHungRenewalDoesNotHoldBackTheRenewalsOfOtherClaims() throws Exception {
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(scheduler).purgeInterval(null)
        .build();
    Admission.Proceed a = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-a")));
    Admission.Proceed b = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-b")));
    store.hangRenewalOf = "k-a";
    scheduled.drainPermits();

    // Past B's first lease (30 s): every 10 s, B's renewal must happen while A's hangs.
    for (int s = 10; s <= 40; s += 10) {
      clockThread.execute(() -> time.advance(Duration.ofSeconds(10)));
      assertTrue(store.renewedB.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS),
          "B's lease was not renewed at " + s + " s while A's renewal hung; once its lease runs out,"
              + " a retry with B's key runs B's handler a second time");
      assertTrue(scheduled.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS), "B's next renewal is timed");
      // A's renewal was handed to the store pool with B's; on a loaded machine its thread may reach
      // the store after B's renewal has returned, so wait for it rather than expect it at once.
      assertTrue(store.hung.await(WAIT_SECONDS, TimeUnit.SECONDS), "A's renewal is the one that hangs");
    }

    Admission retry = guard.admit(post("k-b"));
    assertEquals(Admission.Reason.IN_FLIGHT, assertInstanceOf(Admission.Respond.class, retry).reason(),
        "the client's retry waits for B's handler instead of running it again");
    assertFalse(b.claim().leaseLost());
    assertEquals(CompletionResult.STORED, guard.complete(b.claim(), created()));
    assertEquals(1, store.renewalsOfA.get(), "A's renewal never overlaps itself: the next waits for the hung one");
    assertFalse(a.claim().leaseLost(), "nothing is known yet about the hung renewal");
  }

  @Test
  void aHungPurgeDoesNotHoldBackTheRenewals() throws Exception {
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(scheduler)
        .purgeInterval(Duration.ofSeconds(5)).build();
    Admission.Proceed b = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-b")));
    store.hangPurge = true;
    scheduled.drainPermits();

    for (int s = 10; s <= 40; s += 10) {
      clockThread.execute(() -> time.advance(Duration.ofSeconds(10)));
      assertTrue(store.renewedB.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS),
          "B's lease was not renewed at " + s + " s while a purge hung (a long DELETE, a lock)");
      assertTrue(scheduled.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS), "B's next renewal is timed");
      if (s == 10) {
        // The purge due at 5 s is handed to a store thread, which may start after B's first renewal
        // returned (a loaded machine): waited for here, so the renewals at 20, 30 and 40 s are made
        // while it hangs, whatever the threads' timing.
        assertTrue(store.hung.await(WAIT_SECONDS, TimeUnit.SECONDS), "the purge is the call that hangs");
      }
    }

    assertEquals(Admission.Reason.IN_FLIGHT,
        assertInstanceOf(Admission.Respond.class, guard.admit(post("k-b"))).reason());
    assertEquals(CompletionResult.STORED, guard.complete(b.claim(), created()));
  }

  @Test
  void aRenewalThatEndsAfterItsClaimCompletedDoesNotExtendIt() throws Exception {
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(scheduler).purgeInterval(null)
        .build();
    Admission.Proceed a = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-a")));
    store.hangRenewalOf = "k-a";
    clockThread.execute(() -> time.advance(Duration.ofSeconds(10)));
    assertTrue(store.hung.await(WAIT_SECONDS, TimeUnit.SECONDS));

    assertEquals(CompletionResult.STORED, guard.complete(a.claim(), created()), "the handler ends meanwhile");
    store.unblock.countDown();
    assertTrue(store.renewalsReturned.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS));

    StoredRecord record = store.find(new RecordId("alice", "POST /provision", "k-a")).orElseThrow();
    assertEquals(RecordState.COMPLETED, record.state());
    assertEquals(time.now().plusSeconds(20), record.leaseUntil(), "the claim's lease as it was, not renewed");
    assertFalse(a.claim().leaseLost(), "its end fenced the renewal off: nothing was lost, nothing to warn of");
  }

  @Test
  void aFailedRenewalIsTriedAgainAtTheNextTurn() throws Exception {
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(scheduler).purgeInterval(null)
        .build();
    Admission.Proceed b = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-b")));
    store.failNextRenewal = true;
    scheduled.drainPermits();
    clockThread.execute(() -> time.advance(Duration.ofSeconds(10)));
    assertTrue(scheduled.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS), "the next turn is timed after the failure");
    assertTrue(b.claim().leaseLost(), "the failure is known to the claim");

    clockThread.execute(() -> time.advance(Duration.ofSeconds(10)));
    assertTrue(store.renewedB.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS), "tried again 10 s later");
    assertEquals(time.now().plusSeconds(30), store.find(new RecordId("alice", "POST /provision", "k-b"))
        .orElseThrow().leaseUntil());
    assertEquals(CompletionResult.STORED, guard.complete(b.claim(), created()));
  }

  @Test
  void closeStartsNoMoreStoreCallsAndWaitsForAHungOneOnlySoLong() throws Exception {
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(scheduler).purgeInterval(null)
        .build();
    assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-a")));
    assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-b")));
    store.hangRenewalOf = "k-a";
    clockThread.execute(() -> time.advance(Duration.ofSeconds(10)));
    assertTrue(store.hung.await(WAIT_SECONDS, TimeUnit.SECONDS));
    assertTrue(store.renewedB.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS));

    guard.close(); // waits up to 5 s for A's hung renewal, then interrupts it

    assertTrue(store.interrupted.await(WAIT_SECONDS, TimeUnit.SECONDS),
        "the hung call was interrupted, not left running");
    clockThread.submit(() -> time.advance(Duration.ofSeconds(10))).get(WAIT_SECONDS, TimeUnit.SECONDS);
    assertEquals(0, store.renewedB.availablePermits(), "no renewal after close");
    assertEquals(1, store.renewalsOfA.get());
  }

  private static GuardRequest post(String key) {
    return new GuardRequest("POST", "/provision", null, "application/json", List.of(key), "alice",
        GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8)));
  }

  private static CapturedResponse created() {
    return new CapturedResponse(201, Map.of(), "done".getBytes(StandardCharsets.UTF_8));
  }

  /**
   * The in-memory store, except that the renewal of one key, or the purge, hangs until the test
   * ends (a row lock held elsewhere, a stalled connection); B's renewals are counted.
   */
  private static final class StallingStore extends ForwardingStore {
    final CountDownLatch hung = new CountDownLatch(1);
    final CountDownLatch unblock = new CountDownLatch(1);
    final Semaphore renewedB = new Semaphore(0);
    final Semaphore renewalsReturned = new Semaphore(0);
    final CountDownLatch interrupted = new CountDownLatch(1);
    final AtomicInteger renewalsOfA = new AtomicInteger();
    volatile String hangRenewalOf;
    volatile boolean hangPurge;
    volatile boolean failNextRenewal;

    private void hang() {
      hung.countDown();
      try {
        unblock.await(60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        interrupted.countDown();
        Thread.currentThread().interrupt();
        throw new IdempotencyStoreException("interrupted while stalled", e);
      }
    }

    @Override
    public boolean renew(RecordId id, long generation, String owner, Instant now, Instant leaseUntil) {
      try {
        if (id.key().equals("k-a")) {
          renewalsOfA.incrementAndGet();
        }
        if (id.key().equals(hangRenewalOf)) {
          hang();
        }
        if (failNextRenewal) {
          failNextRenewal = false;
          throw new IdempotencyStoreException("connection reset", null);
        }
        boolean renewed = real.renew(id, generation, owner, now, leaseUntil);
        if (id.key().equals("k-b")) {
          renewedB.release();
        }
        return renewed;
      } finally {
        renewalsReturned.release();
      }
    }

    @Override
    public int purgeExpired(Instant now) {
      if (hangPurge) {
        hang();
      }
      return real.purgeExpired(now);
    }
  }
}
