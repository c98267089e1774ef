package dev.idem.httpclient.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A burst of capture timeouts delivered at once (many keyed calls whose body publishers stall
 * together, behind one slow upstream) made one thread per delivery: the pool had no cap, so each
 * delivery that found every thread busy started another, without bound. Deliveries beyond the cap
 * ({@code max(2, processors)}, as Idem's other pools) now wait for a thread, and every one runs.
 * Each delivery here holds its thread until all are handed over; the latch's timeout only ends a
 * failing run.
 */
class CaptureThreadsTest {
  @Test
  void aBurstOfDeliveriesRunsOnAtMostTheCapOfThreads() throws Exception {
    int cap = Math.max(2, Runtime.getRuntime().availableProcessors());
    int deliveries = 4 * cap;
    Executor timeouts = new CaptureThreads().cancels();
    CountDownLatch handedOver = new CountDownLatch(1);
    CountDownLatch ran = new CountDownLatch(deliveries);
    Set<Thread> threads = ConcurrentHashMap.newKeySet();
    for (int i = 0; i < deliveries; i++) {
      timeouts.execute(() -> {
        threads.add(Thread.currentThread());
        try {
          handedOver.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        ran.countDown();
      });
    }
    handedOver.countDown();
    assertTrue(ran.await(30, TimeUnit.SECONDS), "a delivery waiting for a thread never ran");
    assertTrue(threads.size() <= cap, deliveries + " deliveries at once ran on " + threads.size()
        + " threads, over the cap of " + cap);
  }
}
