package dev.idem.core.review;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyException;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Harness.Driver;
import dev.idem.core.support.JournalOps;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The app-code safety net tells the caller OperationPendingException ("is PENDING ... sent again
 * with it") even when it could not write PENDING, and blames "the app's code" for Idem's own
 * failures. A caller that trusts the exception waits for a dispatcher that the journal does not
 * let send (the operation is IN_FLIGHT under this executor's lease).
 */
class SafetyNetUnwrittenPendingTest {

  /** The app's clock (a time service client, say) that stops answering once the attempt is sent. */
  static final class BreakableClock extends Clock {
    final Clock delegate;
    volatile boolean broken;

    BreakableClock(Clock delegate) {
      this.delegate = delegate;
    }

    @Override
    public Instant instant() {
      if (broken) {
        throw new IllegalStateException("time service unavailable");
      }
      return delegate.instant();
    }

    @Override
    public ZoneId getZone() {
      return delegate.getZone();
    }

    @Override
    public Clock withZone(ZoneId zone) {
      throw new UnsupportedOperationException();
    }
  }

  private static Throwable unwrapped(Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void aClockThatThrowsIsNotReportedAsPendingWhileTheJournalHoldsInFlight(Driver d) throws IdempotencyException {
    // The clock wraps a harness's virtual time, so a first harness gives the time and the journal.
    Harness h = new Harness();
    BreakableClock[] clock = {new BreakableClock(h.time.clock())};
    Harness broken = new Harness(h.journal, Harness.POLICY, b -> b.clock(clock[0]));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    ScriptedTransport t = new ScriptedTransport(broken.time).checkOnSend(s -> clock[0].broken = true)
        .then(status(201));

    Throwable told = unwrapped(assertThrows(Throwable.class, () -> d.run(broken, op, t)));

    OperationRecord r = h.record(op);
    assertEquals(1, t.count());
    assertFalse(r.state() != OperationState.PENDING && told instanceof OperationPendingException, "the journal"
        + " holds " + r.state() + " but the caller is told: " + told);
  }

  /** Returns nothing from find once the takeover's owed attempt is written. */
  static final class VanishesAfterTheOwedAttempt extends ForwardingJournal {
    volatile boolean vanished;

    VanishesAfterTheOwedAttempt() {
      super(new InMemoryJournal());
    }

    @Override
    public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
      super.recordAttempt(id, lease, attempt);
      vanished = true;
    }

    @Override
    public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
      return vanished ? Optional.empty() : super.find(id);
    }
  }

  @ParameterizedTest
  @EnumSource(Driver.class)
  void idemsOwnVanishedOperationIsNotBlamedOnTheAppsCode(Driver d) throws Exception {
    VanishesAfterTheOwedAttempt journal = new VanishesAfterTheOwedAttempt();
    Harness h = new Harness(journal, Harness.POLICY, b -> b.leaseFor(Duration.ofSeconds(30)));
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":100}")).build();
    JournalOps.executor(journal, h.time, "node-a").enqueue(op);
    journal.claim(op.id(), "node-a", h.time.now(), Duration.ofSeconds(30)).orElseThrow();
    h.time.advance(Duration.ofMinutes(1));
    ScriptedTransport t = new ScriptedTransport(h.time).then(status(201));

    Throwable told = unwrapped(assertThrows(Throwable.class, () -> d.run(h, op, t)));

    assertEquals(0, t.count());
    assertFalse(told instanceof OperationPendingException && told.getMessage().contains("the app's code"),
        "the journal lost the operation, yet the caller is told the app's code threw: " + told);
  }
}
