package dev.idem.spring.internal;

import dev.idem.core.OperationState;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.spi.Journal;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.RecordStats;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.WebhookInbox;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * What Idem reports to Actuator's health endpoint, whatever Boot's health API looks like (it moved
 * between Boot 3 and 4; IdemHealthAutoConfiguration turns this into either version's {@code Health}).
 *
 * <p>DOWN only when a store cannot be written or read (the journal, the guard's records, the
 * inbox): then nothing keyed can be sent or accepted. A remote that is down (an open circuit
 * breaker), a lag in the outbox, dead letters or stuck guard claims are reported as details and
 * leave the app UP, since restarting it fixes none of them. Thread-safe.
 */
public final class IdemHealth {
  /** The result: up or down, and the details. */
  public record Report(boolean up, Map<String, Object> details) {}

  private final Supplier<Journal> journal;
  private final BreakerStates breakers;
  private final Supplier<List<OutboxDispatcher>> outbox;
  private final Supplier<IdempotencyGuard> guard;
  private final Supplier<WebhookInbox> inbox;
  private final Clock clock;

  /**
   * @param journal the executor's journal, looked up at each check
   * @param breakers the breaker states
   * @param outbox the outboxes (every OutboxDispatcher bean), possibly none
   * @param guard the guard, or a supplier of null
   * @param inbox the inbox, or a supplier of null
   * @param clock the clock for ages
   */
  public IdemHealth(Supplier<Journal> journal, BreakerStates breakers, Supplier<List<OutboxDispatcher>> outbox,
      Supplier<IdempotencyGuard> guard, Supplier<WebhookInbox> inbox, Clock clock) {
    this.journal = journal;
    this.breakers = breakers;
    this.outbox = outbox;
    this.guard = guard;
    this.inbox = inbox;
    this.clock = clock;
  }

  /** Checks every part now. */
  public Report check() {
    Map<String, Object> d = new LinkedHashMap<>();
    boolean up = section(d, "journal", j -> {
      Journal journal = this.journal.get();
      j.put("writable", false); // first among the details, and true only if every read below works
      if (journal instanceof JdbcJournal jdbc) {
        jdbc.flush(); // a commit: proves the journal takes writes now
      }
      j.put("pending", journal.count(OperationState.PENDING));
      j.put("inFlight", journal.count(OperationState.IN_FLIGHT));
      j.put("uncertain", journal.count(OperationState.UNCERTAIN));
      j.put("oldestPendingAge", age(journal.oldestCreatedAt(OperationState.PENDING).orElse(null)));
      j.put("writable", true);
    });
    d.put("openBreakers", breakers.notClosed());
    List<OutboxDispatcher> outboxes = outbox.get();
    if (!outboxes.isEmpty()) {
      // Several (a partner with a dispatcher of its own): the sum in delivery, offline if any is.
      int inDelivery = 0;
      boolean offline = false;
      for (OutboxDispatcher o : outboxes) {
        inDelivery += o.inDelivery();
        offline |= o.isOffline();
      }
      d.put("outbox", Map.of("inDelivery", inDelivery, "offline", offline));
    }
    IdempotencyGuard g = guard.get();
    if (g != null) {
      up &= section(d, "guard", gd -> {
        RecordStats s = g.stats();
        gd.put("inFlight", s.inFlight());
        gd.put("stuck", s.stuck());
        gd.put("oldestInFlightAge", age(s.oldestInFlight().orElse(null)));
      });
    }
    WebhookInbox in = inbox.get();
    if (in != null) {
      up &= section(d, "webhooks", wd -> {
        // One read of the states the report shows: a probe every few seconds must not count the
        // DONE events kept until purgeDone, most of a long-running inbox.
        Map<InboxState, Long> counts = in.counts(EnumSet.of(InboxState.PENDING, InboxState.PROCESSING, InboxState.DEAD));
        wd.put("waiting", counts.get(InboxState.PENDING) + counts.get(InboxState.PROCESSING));
        wd.put("oldestWaitingAge", in.oldestWaiting().toString());
        wd.put("deadLetters", counts.get(InboxState.DEAD));
      });
    }
    return new Report(up, d);
  }

  private interface Section {
    void fill(Map<String, Object> details) throws Exception;
  }

  /** Adds one store's details under {@code name}; false, with the error among them, if reading it failed. */
  private static boolean section(Map<String, Object> report, String name, Section section) {
    Map<String, Object> details = new LinkedHashMap<>();
    report.put(name, details);
    try {
      section.fill(details);
      return true;
    } catch (Exception e) {
      details.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
      return false;
    }
  }

  private String age(Instant since) {
    return since == null ? Duration.ZERO.toString() : Duration.between(since, clock.instant()).toString();
  }
}
