package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Regression test for a defect found by review, described as it was; fixed: a lane leaves an operation only if it changed since its page read it and is not due.
 *
 * <p>Review (core3) of 4ffc716d's "not claimed by a batch" check in PendingResumer.resumeOne.
 *
 * <p>The check skips an operation whenever it is not due at the lane's clock, even when it is
 * exactly as the pass's due page read it. The executor's twin check (resumeAsyncCounted) skips only
 * a record that changed since it was read, and says why: "Unchanged, it is sent as the dispatcher
 * decided: its own wait on the scheduler outlasts a wall clock stepped back". With several lanes
 * the batch claim is fenced on state and generation only, so an unchanged operation is sent. With
 * one lane, a wall clock stepped back by a second (NTP) between the page read and the lane leaves
 * every operation that fell due in that second PENDING, its handler told "not due: changed since it
 * was read (another process holds it, or queued it ...)", which is false, and an app that resumes
 * once at startup leaves it until its next restart. Same journal, same clock: one lane and two lanes
 * disagree.
 */
class ResumeOneLaneClockStepBackTest {
  private static final Duration LEASE = Duration.ofMinutes(2);

  @ParameterizedTest
  @ValueSource(ints = {1, 2})
  void anUnchangedOperationDueWhenThePageWasReadIsSentWhateverTheLaneCount(int lanes) throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    AtomicReference<Harness> hr = new AtomicReference<>();
    AtomicReference<Duration> stepBack = new AtomicReference<>(Duration.ZERO);
    Clock wall = new Clock() {
      @Override
      public ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(ZoneId zone) {
        return this;
      }

      @Override
      public Instant instant() {
        Harness h = hr.get();
        return (h == null ? dev.idem.core.testing.VirtualTime.DEFAULT_START : h.time.now()).minus(stepBack.get());
      }
    };
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
          throws IdempotencyException {
        List<OperationRecord> page = new ArrayList<>(super.findDue(now, owner, after, limit));
        if (!page.isEmpty()) {
          stepBack.set(Duration.ofSeconds(1));  // NTP steps the wall clock back a second, once the page is read
        }
        return page;
      }

      @Override
      public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
          Duration leaseFor) throws IdempotencyException {
        return delegate().claimAll(asRead, owner, now, leaseFor);
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(lanes).leaseFor(LEASE).clock(wall)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    hr.set(h);
    h.executor.enqueue(op);
    // An earlier attempt was answered 503; it is due again in 5 s.
    Instant t = h.time.now();
    Lease l = journal.claim(op.id(), Harness.OWNER, t, LEASE).orElseThrow();
    journal.transition(op.id(), l, Transition.retryAt(t, t.plusSeconds(5), "503"));
    h.time.advance(Duration.ofSeconds(5));

    FakeHost host = new FakeHost(h.time, FakeHost.always(201));
    List<Object> told = new ArrayList<>();
    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(host, told::add, told::add)));

    assertEquals(1, host.attempts(op.key()), lanes + " lane(s): due when the page was read and unchanged since,"
        + " it was not sent; summary " + summary + ", handler told " + told);
    assertEquals(1, summary.succeeded(), "summary: " + summary);
  }
}
