package dev.idem.core;

import static dev.idem.core.support.JournalOps.executor;
import static dev.idem.core.support.JournalOps.finish;
import static dev.idem.core.support.JournalOps.id;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.resume.Reconciliation;
import dev.idem.core.testing.VirtualTime;
import java.lang.reflect.Field;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link InMemoryJournal}'s two drop queues: what a re-drive leaves in them, and two callers dropping at once. */
class InMemoryJournalDropQueuesTest {





  private static int kept(InMemoryJournal journal) throws IdempotencyException {
    int n = 0;
    for (OperationState s : OperationState.values()) {
      n += journal.findByState(s, null, 10_000).size();
    }
    return n;
  }

  private static int queued(InMemoryJournal journal, String queue) throws ReflectiveOperationException {
    Field f = InMemoryJournal.class.getDeclaredField(queue);
    f.setAccessible(true);
    return ((Collection<?>) f.get(journal)).size();
  }

  /**
   * The usual life of the default journal in an app that reconciles: calls keep succeeding, now and
   * then one ends UNCERTAIN, and reconcileUncertain settles it (a re-drive, then FAILED or
   * SUCCEEDED). The settled operation is later dropped by the bound from its new place in the
   * SUCCEEDED/FAILED queue, but its first place, the slot itself (with its packed record), stays in
   * the UNCERTAIN queue: that queue is read only once no SUCCEEDED or FAILED operation is left,
   * which never happens while calls succeed, and only purge sweeps it. So every operation ever
   * reconciled stays in memory, beyond the bound, until the process ends or purges.
   */
  @Test
  void reconciledOperationsDroppedByTheBoundDoNotStayInMemory() throws Exception {
    InMemoryJournal probe = new InMemoryJournal();
    finish(probe, "probe", OperationState.SUCCEEDED);
    long bound = 4 * InMemoryJournal.weight(probe.find(id("probe")).orElseThrow());
    InMemoryJournal journal = new InMemoryJournal(bound);
    VirtualTime time = new VirtualTime();
    IdempotentExecutor idem = executor(journal, time, "p1");

    int rounds = 2_000;
    int settled = 0;
    for (int i = 0; i < rounds; i++) {
      finish(journal, "u" + i, OperationState.UNCERTAIN);
      settled += idem.reconcileUncertain(r -> Reconciliation.failed("the provider has no such charge"));
      for (int s = 0; s < 4; s++) {
        finish(journal, "s" + i + "-" + s, OperationState.SUCCEEDED);
      }
    }

    assertEquals(rounds, settled, "precondition: every UNCERTAIN operation was reconciled");
    int kept = kept(journal);
    assertTrue(kept <= 5, "precondition: the bound holds what it counts (" + kept + " kept)");
    int stale = queued(journal, "uncertain");
    assertTrue(stale <= kept, "the journal holds " + kept + " operations, yet its UNCERTAIN drop queue keeps "
        + stale + " entries: the slots (and packed records) of reconciled operations the bound dropped long ago,"
        + " outside the bound, for as long as the process runs without a purge");
  }

  /**
   * The class Javadoc: UNCERTAIN operations are dropped "only once none of those [SUCCEEDED, FAILED]
   * is left". Two callers finish at once in a journal at its bound: A's drop takes the last
   * SUCCEEDED entry off the queue and is about to lock its slot (held here, deterministically, by
   * this test, as another listing or purge would hold it); B, seeing the bytes still over, finds
   * the SUCCEEDED queue empty and drops the oldest UNCERTAIN operation. A then drops the success
   * too: the journal keeps one operation where it has room for two, and the UNCERTAIN one awaiting
   * reconciliation was dropped while a success was still there. Run one after the other, the same
   * two finishes keep both UNCERTAIN operations.
   */
  @Test
  void twoCallersDroppingAtOnceDoNotDropAnUncertainOperationWhileASuccessIsLeft() throws Exception {
    InMemoryJournal probe = new InMemoryJournal();
    finish(probe, "u1", OperationState.UNCERTAIN);
    long w = InMemoryJournal.weight(probe.find(id("u1")).orElseThrow());
    InMemoryJournal serial = new InMemoryJournal(2 * w + w / 2); // room for two operations
    for (String k : List.of("u1", "s1", "s2", "u2")) {
      finish(serial, k, k.startsWith("u") ? OperationState.UNCERTAIN : OperationState.SUCCEEDED);
    }
    assertTrue(serial.find(id("u1")).isPresent() && serial.find(id("u2")).isPresent(),
        "precondition: one after the other, both UNCERTAIN operations are kept");

    InMemoryJournal journal = new InMemoryJournal(2 * w + w / 2);
    finish(journal, "u1", OperationState.UNCERTAIN);
    finish(journal, "s1", OperationState.SUCCEEDED);

    Field slotsField = InMemoryJournal.class.getDeclaredField("slots");
    slotsField.setAccessible(true);
    Object s1Slot = ((Map<?, ?>) slotsField.get(journal)).get(id("s1"));
    Thread a = new Thread(() -> {
      try {
        finish(journal, "s2", OperationState.SUCCEEDED);
      } catch (IdempotencyException e) {
        throw new AssertionError(e);
      }
    });
    synchronized (s1Slot) {
      a.start();
      // A has taken s1's entry off the SUCCEEDED queue and waits for s1's lock.
      while (a.getState() != Thread.State.BLOCKED) {
        assertTrue(a.isAlive(), "A ended without waiting for s1's lock");
        Thread.onSpinWait();
      }
      finish(journal, "u2", OperationState.UNCERTAIN); // B
    }
    a.join();

    assertTrue(journal.find(id("u1")).isPresent(), "u1 (UNCERTAIN, awaiting reconciliation) was dropped while"
        + " s1 (SUCCEEDED) was still in the journal; it now keeps " + kept(journal) + " operation(s) with room for 2");
  }
}
