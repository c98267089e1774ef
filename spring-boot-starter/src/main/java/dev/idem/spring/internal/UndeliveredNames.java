package dev.idem.spring.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * At startup, says once what no outbox will ever send: the PENDING operations in the journal whose
 * name no OutboxDispatcher bean has a transport for (the caller passes the union of every
 * dispatcher's names: a name the app's second dispatcher delivers will be sent). A dispatcher skips
 * names it does not deliver without a word (they may be another dispatcher's), and the interceptor's {@code enqueue} refuses them now, but a journal
 * written by an older version, or before a name was dropped from {@code idem.outbox.operations},
 * may still hold some: they would stay PENDING for good (their age limit is applied only by a
 * delivery), the app believing them queued.
 *
 * <p>Bounded: it reads at most {@link #MAX_PAGES} times {@link #PAGE} records (each holds its
 * request, up to the journal's body limit), on the starting thread, and says when it stopped short.
 */
final class UndeliveredNames {
  private static final Logger LOG = LoggerFactory.getLogger(UndeliveredNames.class);
  static final int PAGE = 100;
  static final int MAX_PAGES = 100;

  private UndeliveredNames() {}

  /**
   * Logs one WARN naming each PENDING operation name not in {@code delivered} (every outbox's
   * names), with its count, if
   * there is any; a journal that cannot be read is left to the health indicator (logged at DEBUG).
   *
   * @return the counts per undelivered name (empty if none, or if the journal could not be read)
   */
  static Map<String, Integer> warn(IdempotentExecutor executor, Set<String> delivered) {
    Map<String, Integer> undelivered = new TreeMap<>();
    boolean complete = false;
    try {
      OperationId after = null;
      // Bounded by the records read, not by pages: a journal may return short pages (only an
      // empty one is the last), and 100 pages of one record would have stopped this at 100.
      int read = 0;
      while (read < PAGE * MAX_PAGES) {
        List<OperationRecord> records = executor.list(OperationState.PENDING, after,
            Math.min(PAGE, PAGE * MAX_PAGES - read));
        if (records.isEmpty()) {
          complete = true;
          break;
        }
        for (OperationRecord r : records) {
          String name = r.id().operation();
          if (!delivered.contains(name)) {
            undelivered.merge(name, 1, Integer::sum);
          }
        }
        read += records.size();
        after = records.get(records.size() - 1).id();
      }
    } catch (IdempotencyException | RuntimeException e) {
      LOG.debug("could not look for PENDING operations no outbox delivers: {}", e.toString());
      return Map.of();
    }
    if (!undelivered.isEmpty()) {
      LOG.warn("The journal holds PENDING operations of names no outbox has a transport for, which none will"
          + " ever send: {}{}. Add each name to idem.outbox.operations (or register a transport for it with an"
          + " OutboxCustomizer bean) to deliver them with their keys, or resume them once with"
          + " IdempotentExecutor.resumePending and a ResumeHandler for the name", undelivered,
          complete ? "" : " (among the first " + PAGE * MAX_PAGES + " PENDING operations; there are more)");
    }
    return undelivered;
  }
}
