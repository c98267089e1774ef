package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: ForwardingJournal does not forward the names overload: its default runs the subclass's findDue.
 *
 * <p>Review of 4cc7ea00 ("a poll reads the due operations of its registered names only").
 *
 * <p>{@link ForwardingJournal} is documented as the way to "observe or change a few calls (count
 * them, time them, fail them in a test)", and its class Javadoc lists, one by one, each call that a
 * subclass's override does not see (claimWaiting, claimAll, claimIfUnchanged, redriveIfUnchanged,
 * settleIfUnchanged ...). Until 4cc7ea00 the outbox dispatcher read its due operations through
 * {@code findDue(now, owner, after, limit)}, so a subclass overriding that method saw, and could
 * change, every page the dispatcher delivered from. The dispatcher now calls the new
 * {@code findDue(now, owner, names, after, limit)}, which ForwardingJournal forwards straight to
 * the delegate: an existing subclass that overrides only the 4-argument method is silently bypassed
 * (it compiles, it is still called by resumePending, it is never called by the dispatcher), and the
 * class Javadoc does not say so. Every such wrapper in this repository's own tests had to be
 * rewritten in the same commit (eight of them), which is what users' wrappers need too, without
 * being told.
 *
 * <p>User-visible consequence, shown here: a wrapper that keeps a paused tenant's operations out of
 * the due pages (a documented use: change a call) no longer holds them back; the dispatcher sends
 * them. Likewise fault-injection and metrics wrappers on findDue stop seeing the dispatcher.
 */
class ForwardingJournalDueOverrideTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  /** A wrapper written against the SPI before 4cc7ea00: tenant "paused" is held back from delivery. */
  private final ForwardingJournal pausedTenantHeldBack = new ForwardingJournal(journal) {
    @Override
    public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
        throws IdempotencyException {
      return super.findDue(now, owner, after, limit).stream()
          .filter(r -> !r.id().scope().equals("paused"))
          .toList();
    }
  };

  @Test
  void aWrapperOverridingTheDueReadStillDecidesWhatTheDispatcherDelivers() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(pausedTenantHeldBack).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    idem.enqueue(Operation.builder("create-order", Requests.order("{\"n\":1}")).scope("paused").build());
    try (OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build().start()) {
      time.advance(Duration.ofSeconds(10));

      assertEquals(0, host.totalAttempts(), "the ForwardingJournal subclass overrides findDue(now, owner, after,"
          + " limit) to hold tenant 'paused' back, yet the dispatcher sent its operation "
          + host.totalAttempts() + " time(s): it now reads findDue(now, owner, names, after, limit), which"
          + " ForwardingJournal forwards to the delegate past the override (undocumented)");
    }
  }
}
