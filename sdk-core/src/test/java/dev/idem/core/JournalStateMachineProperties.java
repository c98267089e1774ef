package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.support.Trials;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Random event sequences against {@link InMemoryJournal}, checked against a small model: terminal
 * states are left only by re-drive (or disappear by purge), a lease that is not the current one
 * never changes anything and gets {@link StaleOwnerException}, refused calls change nothing, the
 * generation never goes back and the attempt history only grows.
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

  @Test
  void randomEventSequencesKeepTheStateMachineInvariants() {
    Trials.run(400, g -> {
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
      int steps = g.intBetween(1, 80);
      StringBuilder trace = new StringBuilder();
      for (int step = 0; step < steps; step++) {
        NewOperation op = g.oneOf(ops);
        OperationId id = op.id();
        Model m = models.get(id);
        Kind kind = g.oneOf(Kind.values());
        Optional<OperationRecord> before = journal.find(id);
        OperationState target = g.oneOf(OperationState.values());
        Lease lease = pickLease(g, m, before.orElse(null), now);
        String claimant = g.oneOf(OWNERS);
        Object result;
        try {
          result = switch (kind) {
            case BEGIN -> journal.begin(new NewOperation(id, null, op.fingerprint(), op.request(), now));
            case BEGIN_OTHER_FINGERPRINT -> before.isEmpty() ? "skipped" : journal.begin(new NewOperation(id, null,
                Fingerprinter.defaults().fingerprint(Requests.order("{\"other\":true}")), op.request(), now));
            case CLAIM -> journal.claim(id, claimant, now, Duration.ofSeconds(g.longBetween(1, 120)));
            case RECORD -> {
              journal.recordAttempt(id, lease, attempt(g, lease, now));
              yield "recorded";
            }
            case TRANSITION -> journal.transition(id, lease, transition(target, now));
            case ABANDON -> journal.abandon(id, transition(target, now));
            case REDRIVE -> journal.redrive(id, now);
            case PURGE -> journal.purge(now.minusSeconds(g.longBetween(-60, 600)));
            case TICK -> {
              now = now.plusSeconds(g.longBetween(0, 200));
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
    });
  }

  private static Lease pickLease(Trials.Gen g, Model m, OperationRecord r, Instant now) {
    int roll = g.intBetween(0, 9);
    if (roll < 5 && m.live != null) {
      return m.live;
    }
    if (roll < 8 && !m.issued.isEmpty()) {
      return g.oneOf(m.issued);
    }
    long gen = r == null ? g.longBetween(0, 3) : Math.max(0, r.generation() + g.longBetween(-1, 1));
    return new Lease(r != null && r.owner() != null && g.chance(0.5) ? r.owner() : g.oneOf(OWNERS), gen,
        now.plusSeconds(60));
  }

  private static AttemptRecord attempt(Trials.Gen g, Lease lease, Instant now) {
    return new AttemptRecord(g.intBetween(1, 50), lease.generation(), now, now, g.oneOf(Classification.values()),
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
          if (before.state() == OperationState.IN_FLIGHT
              && before.attempts().stream().noneMatch(a -> a.generation() == before.generation())) {
            // The holder may have sent its attempt: the takeover counts it as ambiguous.
            assertEquals(before.attempts().size() + 1, after.attempts().size());
            assertTrue(after.attempts().get(after.attempts().size() - 1).isAmbiguous());
          }
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
