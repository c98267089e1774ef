package dev.idem.core;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.StaleOwnerException;
import dev.idem.core.spi.Transition;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static dev.idem.core.support.Props.chance;
import static dev.idem.core.support.Props.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Random event sequences against {@link InMemoryJournal}, checked against a small model: terminal
 * states are left only by re-drive (or disappear by purge), a lease that is not the current one
 * never changes anything and gets {@link StaleOwnerException}, refused calls change nothing, the
 * generation never goes back and the attempt history only grows. QuickTheories generates the events
 * and shrinks a failing sequence.
 */
class JournalStateMachineProperties {
  private static final Instant T0 = Instant.parse("2026-11-02T10:00:00Z");
  private static final List<String> OWNERS = List.of("p1", "p2", "p3");

  enum Kind { BEGIN, BEGIN_OTHER_FINGERPRINT, CLAIM, RECORD, TRANSITION, ABANDON, REDRIVE, PURGE, TICK }

  /** What the model believes about one operation. */
  private static final class Model {
    Lease live; // the lease of the latest claim, while it is current
    final List<Lease> issued = new ArrayList<>();
  }

  /** Which operation an event touches, what it does, and the state a transition or abandon asks for. */
  record Who(int op, Kind kind, OperationState target) {}

  /**
   * How the event's lease is picked (see {@link #pickLease}): the model's live lease, an issued one,
   * or a made-up one with this generation offset and owner.
   */
  record LeaseChoice(int roll, int issuedPick, long freshGeneration, long generationDelta, boolean ownerFromRecord,
      int owner) {}

  /** The event's other arguments. */
  record Args(int claimant, long leaseSeconds, int attemptNumber, Classification classification, long purgeOffset,
      long tickSeconds) {}

  /** One random event. */
  record Event(Who who, LeaseChoice lease, Args args) {}

  static Gen<Event> events() {
    Gen<Who> who = integers().between(0, 1).zip(Generate.enumValues(Kind.class),
        Generate.enumValues(OperationState.class), Who::new);
    Gen<LeaseChoice> lease = integers().between(0, 9).zip(integers().between(0, 1_000), longs().between(0, 3),
        longs().between(-1, 1), (roll, pick, fresh, delta) -> new LeaseChoice(roll, pick, fresh, delta, false, 0))
        .zip(chance(50), integers().between(0, OWNERS.size() - 1),
            (l, fromRecord, owner) -> new LeaseChoice(l.roll(), l.issuedPick(), l.freshGeneration(),
                l.generationDelta(), fromRecord, owner));
    Gen<Args> args = integers().between(0, OWNERS.size() - 1).zip(longs().between(1, 120), integers().between(1, 50),
        Generate.enumValues(Classification.class), (c, secs, n, cls) -> new Args(c, secs, n, cls, 0, 0))
        .zip(longs().between(-60, 600), longs().between(0, 200),
            (a, purge, tick) -> new Args(a.claimant(), a.leaseSeconds(), a.attemptNumber(), a.classification(), purge,
                tick));
    return who.zip(lease, args, Event::new);
  }

  /** Up to 80 events; shrinking drops and simplifies events, so a failure prints a short trace. */
  @Test
  void randomEventSequencesKeepTheStateMachineInvariants() {
    qt(400).forAll(lists().of(events()).ofSizeBetween(1, 80)).checkAssert(events -> {
      try {
        run(events);
      } catch (IdempotencyException e) {
        throw new AssertionError(e);
      }
    });
  }

  private static void run(List<Event> events) throws IdempotencyException {
    InMemoryJournal journal = new InMemoryJournal();
    List<NewOperation> ops = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      RequestSnapshot req = Requests.order("{\"n\":" + i + "}");
      OperationId id = new OperationId("tenant", "op-" + i, IdempotencyKey.of("key-" + i));
      ops.add(new NewOperation(id, null, Fingerprinter.defaults().fingerprint(req), req, T0));
    }
    Map<OperationId, Model> models = new HashMap<>();
    ops.forEach(o -> models.put(o.id(), new Model()));
    Instant now = T0;
    StringBuilder trace = new StringBuilder();
    for (int step = 0; step < events.size(); step++) {
      Event ev = events.get(step);
      NewOperation op = ops.get(ev.who().op());
      OperationId id = op.id();
      Model m = models.get(id);
      Kind kind = ev.who().kind();
      Optional<OperationRecord> before = journal.find(id);
      OperationState target = ev.who().target();
      Lease lease = pickLease(ev.lease(), m, before.orElse(null), now);
      Args a = ev.args();
      String claimant = OWNERS.get(a.claimant());
      Object result;
      try {
        result = switch (kind) {
          case BEGIN -> journal.begin(new NewOperation(id, null, op.fingerprint(), op.request(), now));
          case BEGIN_OTHER_FINGERPRINT -> before.isEmpty() ? "skipped" : journal.begin(new NewOperation(id, null,
              Fingerprinter.defaults().fingerprint(Requests.order("{\"other\":true}")), op.request(), now));
          case CLAIM -> journal.claim(id, claimant, now, Duration.ofSeconds(a.leaseSeconds()));
          case RECORD -> {
            journal.recordAttempt(id, lease, attempt(a, lease, now));
            yield "recorded";
          }
          case TRANSITION -> journal.transition(id, lease, transition(target, now));
          case ABANDON -> journal.abandon(id, transition(target, now));
          case REDRIVE -> journal.redrive(id, now);
          case PURGE -> journal.purge(now.minusSeconds(a.purgeOffset()));
          case TICK -> {
            now = now.plusSeconds(a.tickSeconds());
            yield "tick";
          }
        };
      } catch (StaleOwnerException | IllegalStateException | IllegalArgumentException
          | IdempotencyKeyReusedException e) {
        result = e;
      }
      trace.append("\n  ").append(step).append(": ").append(kind).append(' ').append(id.operation())
          .append(kind == Kind.TRANSITION || kind == Kind.ABANDON ? " -> " + target : "")
          .append(kind == Kind.RECORD || kind == Kind.TRANSITION ? " with " + lease : "")
          .append(" => ").append(result instanceof Exception ? result.getClass().getSimpleName() : "ok")
          .append(" | ").append(before.map(OperationRecord::state).orElse(null)).append(" -> ")
          .append(journal.find(id).map(OperationRecord::state).orElse(null));
      try {
        check(kind, target, lease, claimant, m, before.orElse(null), journal.find(id).orElse(null), result, now);
      } catch (AssertionError e) {
        throw new AssertionError(e.getMessage() + "\ntrace:" + trace, e);
      }
    }
  }

  private static Lease pickLease(LeaseChoice c, Model m, OperationRecord r, Instant now) {
    if (c.roll() < 5 && m.live != null) {
      return m.live;
    }
    if (c.roll() < 8 && !m.issued.isEmpty()) {
      return m.issued.get(c.issuedPick() % m.issued.size());
    }
    long gen = r == null ? c.freshGeneration() : Math.max(0, r.generation() + c.generationDelta());
    return new Lease(r != null && r.owner() != null && c.ownerFromRecord() ? r.owner() : OWNERS.get(c.owner()), gen,
        now.plusSeconds(60), false);
  }

  private static AttemptRecord attempt(Args a, Lease lease, Instant now) {
    return new AttemptRecord(a.attemptNumber(), lease.generation(), now, now, a.classification(),
        503, null, "HTTP 503", Duration.ZERO, "test");
  }

  private static Transition transition(OperationState target, Instant now) {
    ResponseSnapshot response = target == OperationState.SUCCEEDED ? ScriptedTransport.response(200) : null;
    Instant next = target == OperationState.PENDING ? now.plusSeconds(5) : null;
    return new Transition(target, now, next, response, "test");
  }

  private static boolean isCurrent(Lease lease, Model m, OperationRecord r) {
    return r != null && r.state() == OperationState.IN_FLIGHT && m.live != null
        && lease.owner().equals(m.live.owner()) && lease.generation() == m.live.generation();
  }

  private static void check(Kind kind, OperationState target, Lease lease, String claimant, Model m,
      OperationRecord before,
      OperationRecord after, Object result, Instant now) {
    boolean refused = result instanceof Exception;
    if (refused) {
      assertEquals(before, after, kind + " was refused (" + result + ") but changed the record");
    }
    if (before != null && after != null) {
      assertTrue(after.generation() >= before.generation(), "generation went back");
      assertTrue(after.attempts().size() >= before.attempts().size()
          && after.attempts().subList(0, before.attempts().size()).equals(before.attempts()), "history rewritten");
      assertEquals(before.id(), after.id());
      assertEquals(before.fingerprint(), after.fingerprint());
    }
    if (before != null && before.state().isTerminal()) {
      if (after == null) {
        assertEquals(Kind.PURGE, kind, "a terminal record vanished without a purge");
      } else if (after.state() != before.state()) {
        assertEquals(Kind.REDRIVE, kind, "left terminal " + before.state() + " by " + kind);
        assertEquals(OperationState.PENDING, after.state());
      }
    }
    if (before != null && after == null) {
      assertEquals(Kind.PURGE, kind, "a record vanished");
      assertTrue(before.state().isTerminal(), "purged a " + before.state() + " operation");
    }
    if (before == null && after != null) {
      assertEquals(Kind.BEGIN, kind, "a record appeared from " + kind);
    }
    switch (kind) {
      case BEGIN -> {
        assertNotNull(after);
        assertEquals(before == null, ((BeginResult) result).created());
        if (before == null) {
          assertEquals(OperationState.PENDING, after.state());
          assertEquals(0, after.generation());
        }
      }
      case BEGIN_OTHER_FINGERPRINT -> {
        if (before != null) {
          assertTrue(result instanceof IdempotencyKeyReusedException, "another fingerprint accepted: " + result);
        }
      }
      case CLAIM -> {
        if (before == null) {
          assertTrue(refused);
          return;
        }
        // An expired lease, or the claimant's own (a restarted instance under a stable owner name).
        boolean claimable = before.state() == OperationState.PENDING
            || (before.state() == OperationState.IN_FLIGHT
                && (!before.isLeasedAt(now) || claimant.equals(before.owner())));
        @SuppressWarnings("unchecked")
        Optional<Lease> got = (Optional<Lease>) result;
        assertEquals(claimable, got.isPresent(), "claim of a " + before.state() + " operation");
        if (got.isPresent()) {
          assertEquals(before.generation() + 1, got.get().generation());
          // A takeover is reported, and nothing else recorded: the executor applies the takeover rule.
          assertEquals(before.state() == OperationState.IN_FLIGHT, got.get().takeover());
          assertEquals(before.attempts(), after.attempts());
          assertEquals(OperationState.IN_FLIGHT, after.state());
          assertEquals(got.get().owner(), after.owner());
          m.live = got.get();
          m.issued.add(got.get());
        } else {
          assertEquals(before, after);
        }
      }
      case RECORD, TRANSITION -> {
        if (before == null) {
          assertTrue(refused);
          return;
        }
        if (!isCurrent(lease, m, before)) {
          assertTrue(result instanceof StaleOwnerException, "a stale lease " + lease + " was accepted by " + kind
              + " on " + before.state() + " owner " + before.owner() + " gen " + before.generation());
          return;
        }
        assertTrue(!refused, kind + " with the current lease was refused: " + result);
        if (kind == Kind.TRANSITION) {
          assertEquals(target, after.state());
          if (target != OperationState.IN_FLIGHT) {
            m.live = null;
          }
        } else {
          assertEquals(before.attempts().size() + 1, after.attempts().size());
        }
      }
      case ABANDON -> {
        // straight to a terminal state, and one that PENDING may reach (not SUCCEEDED: no response said so)
        if (before == null || before.state() != OperationState.PENDING || !target.isTerminal()
            || !OperationState.PENDING.canTransitionTo(target)) {
          assertTrue(refused, "abandon " + (before == null ? null : before.state()) + " -> " + target + " accepted");
        } else {
          assertEquals(target, after.state());
          m.live = null;
        }
      }
      case REDRIVE -> {
        boolean allowed = before != null
            && (before.state() == OperationState.FAILED || before.state() == OperationState.UNCERTAIN);
        assertEquals(allowed, !refused, "redrive of " + (before == null ? null : before.state()));
        if (allowed) {
          assertEquals(OperationState.PENDING, after.state());
          assertEquals(before.generation(), after.generation());
          m.live = null;
        }
      }
      case PURGE -> {
        if (after == null && before != null) {
          m.live = null;
          m.issued.clear();
        }
      }
      default -> { }
    }
    if (after != null && after.state() != OperationState.IN_FLIGHT) {
      m.live = null;
    }
    if (after == null && before == null && kind != Kind.PURGE && kind != Kind.TICK
        && kind != Kind.BEGIN_OTHER_FINGERPRINT && !refused) {
      fail(kind + " succeeded on a missing operation");
    }
  }
}
