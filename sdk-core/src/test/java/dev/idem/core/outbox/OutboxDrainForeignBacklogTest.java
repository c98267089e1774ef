package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.Outcome;
import dev.idem.core.spi.Journal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Regression test: the drain check of {@code shutdown(timeout)} reads the unfinished operations of
 * the names its dispatcher registers only ({@code Journal.findByState} with names).
 *
 * <p>Two services share one journal; the other's target is down, so its queue (here 5,000 PENDING
 * operations of "a-refund") stays. The poll already read its own names' due operations only
 * (OutboxForeignBacklogTest), but the drain check paged through {@code findByState(PENDING)} and
 * {@code findByState(IN_FLIGHT)} of every name and kept its own, after each poll that left no
 * delivery running: draining 200 orders, the check read and decoded the whole foreign backlog each
 * time. It cannot use the poll's due read instead (PostgresDrainSkipsNoLockedRowTest,
 * DrainAsksNoFarFutureTest).
 *
 * <p>The journal is wrapped in a proxy that counts what every read hands over, whichever overload
 * it is (a proxy, not a ForwardingJournal, whose names overloads run the SPI's defaults through its
 * own by-state read).
 */
class OutboxDrainForeignBacklogTest {
  private static final int FOREIGN = 5_000;
  private static final int ORDERS = 200;
  private static final String OWN = "create-order";

  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));
  private final AtomicBoolean draining = new AtomicBoolean();
  /** While draining: the records of other names the journal handed over, and the by-state reads. */
  private final AtomicLong foreignRead = new AtomicLong();
  private final AtomicLong byStateReads = new AtomicLong();
  private final Journal counting = (Journal) Proxy.newProxyInstance(Journal.class.getClassLoader(),
      new Class<?>[] {Journal.class}, (proxy, method, args) -> {
        Object result;
        try {
          result = method.invoke(journal, args);
        } catch (InvocationTargetException e) {
          throw e.getCause();
        }
        if (draining.get() && method.getName().startsWith("find") && result instanceof List<?> page) {
          if (method.getName().equals("findByState")) {
            byStateReads.incrementAndGet();
          }
          for (Object r : page) {
            if (!((OperationRecord) r).id().operation().equals(OWN)) {
              foreignRead.incrementAndGet();
            }
          }
        }
        return result;
      });

  @Test
  void aDrainCheckReadsNoOperationOfNamesItDoesNotDeliver() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(counting).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    for (int i = 0; i < FOREIGN; i++) {
      // "a-refund" sorts ahead of "create-order" in identity order too.
      idem.enqueue(Operation.builder("a-refund", Requests.order("{\"r\":" + i + "}")).build());
    }
    time.advance(Duration.ofSeconds(1));
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync(OWN, host).build();
    List<CompletableFuture<Outcome>> handles = new ArrayList<>();
    for (int i = 0; i < ORDERS; i++) {
      handles.add(outbox.submit(Operation.builder(OWN, Requests.order("{\"n\":" + i + "}")).build()));
    }
    outbox.start();
    // The first poll, before the drain: it also looks once for due times written on a clock ahead
    // (DueDeadlines), a read by state that is not the drain check's (its own test is below).
    time.runDueTasks();

    draining.set(true);
    CompletableFuture<Boolean> drained = outbox.shutdown(Duration.ofMinutes(5));
    time.advance(Duration.ofMinutes(1));

    assertTrue(drained.isDone() && drained.join(), "drained");
    handles.forEach(h -> assertTrue(h.isDone() && !h.isCompletedExceptionally()));
    assertEquals(ORDERS, host.sendTimes().size());
    assertTrue(byStateReads.get() > 0, "the drain checked the journal by state");
    assertEquals(0, foreignRead.get(), "draining " + ORDERS + " orders, the journal's " + byStateReads.get()
        + " reads by state handed over " + foreignRead.get() + " records of a name this dispatcher does not"
        + " deliver: each drain check pages through all " + FOREIGN + " PENDING operations of another service");
    outbox.close();
  }

  /**
   * Regression test: the first poll's look for due times written on a clock ahead of this one
   * (DueDeadlines, also after each step back of the wall clock) paged through the PENDING
   * operations of every name, the other service's whole backlog included.
   */
  @Test
  void theFirstPollsLookForDueTimesReadsNoOperationOfNamesItDoesNotDeliver() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(counting).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    for (int i = 0; i < FOREIGN; i++) {
      idem.enqueue(Operation.builder("a-refund", Requests.order("{\"r\":" + i + "}")).build());
    }
    time.advance(Duration.ofSeconds(1));
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync(OWN, host).build();
    CompletableFuture<Outcome> handle = outbox.submit(Operation.builder(OWN, Requests.order("{\"n\":1}")).build());

    draining.set(true); // counting from here: the start and its first poll
    outbox.start();
    time.runDueTasks();

    assertTrue(handle.isDone() && !handle.isCompletedExceptionally(), "delivered");
    assertTrue(byStateReads.get() > 0, "the first poll looked for due times by state");
    assertEquals(0, foreignRead.get(), "the first poll's " + byStateReads.get() + " reads by state handed over "
        + foreignRead.get() + " records of a name this dispatcher does not deliver");
    outbox.close();
  }
}
