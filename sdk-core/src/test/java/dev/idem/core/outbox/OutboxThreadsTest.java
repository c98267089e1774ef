package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The threads a dispatcher owns when it is given none (its poller, from the shared poll loop, and
 * the worker pool of a synchronous transport) are daemons and none outlives close(). Real threads,
 * so the test waits on the handle and on joins, never a sleep.
 */
class OutboxThreadsTest {
  @Test
  void theThreadsTheDispatcherOwnsAreDaemonsAndStopOnClose() throws Exception {
    Set<Thread> before = Thread.getAllStackTraces().keySet();
    try (IdempotentExecutor idem = IdempotentExecutor.builder().journal(new InMemoryJournal()).build()) {
      OutboxDispatcher outbox = OutboxDispatcher.builder(idem)
          .register("create-order", (request, key) -> FakeHost.response(201, Map.of())).build().start();
      Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
      assertEquals(op.key(), outbox.submit(op).get(30, TimeUnit.SECONDS).key());
      List<Thread> owned = Thread.getAllStackTraces().keySet().stream()
          .filter(t -> t.getName().startsWith("idem-outbox-") && !before.contains(t)).toList();
      assertTrue(owned.stream().anyMatch(t -> t.getName().startsWith("idem-outbox-poller-")), owned.toString());
      assertTrue(owned.stream().anyMatch(t -> t.getName().startsWith("idem-outbox-worker-")), owned.toString());
      assertTrue(owned.stream().allMatch(Thread::isDaemon), "daemon threads never hold the JVM open");

      outbox.close();

      for (Thread t : owned) {
        t.join(30_000);  // close() interrupts them; a thread may take a moment to leave run()
        assertFalse(t.isAlive(), t.getName() + " outlived close()");
      }
    }
  }
}
