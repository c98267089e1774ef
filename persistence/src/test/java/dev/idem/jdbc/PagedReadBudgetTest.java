package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.internal.OperationTable;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A paged read stops taking rows at {@link OperationTable#PAGE_READ_CHARS} of stored text and
 * returns that page short (only an empty page is the last), so a page of large requests is bounded
 * by bytes; paged on to the empty page, every row comes once, in the order of the query, for each
 * paged read (the due order by identity and by owner, a state, the undelivered outcomes, the
 * summaries), with a page size larger and smaller than one read.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PagedReadBudgetTest {
  /** Rows of each kind: three reads' worth of stored text at about 683,000 characters a request. */
  private static final int ROWS = 15;

  private Path dir;
  private final List<OperationId> pending = new ArrayList<>();
  private final List<OperationId> failed = new ArrayList<>();

  @BeforeAll
  void journalOfLargeRequests(@TempDir Path tmp) throws Exception {
    dir = tmp.resolve("journal");
    Ops ops = new Ops(5);
    String pad = "x".repeat(500_000);
    try (JdbcJournal j = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
      for (int i = 0; i < ROWS; i++) {
        OperationId p = ops.id("create-order");
        j.begin(new NewOperation(p, null, fingerprint(i, pad), request(i, pad), T0));
        pending.add(p);
        OperationId f = ops.id("send-mail");
        j.begin(new NewOperation(f, null, fingerprint(i, pad), request(i, pad), T0, true));
        j.abandon(f, Transition.finish(OperationState.FAILED, T0.plusSeconds(1), null, "refused"));
        failed.add(f);
      }
    }
    pending.sort(Comparator.comparing(OperationId::scope).thenComparing(OperationId::operation)
        .thenComparing(id -> id.key().value()));
    failed.sort(Comparator.comparing(OperationId::scope).thenComparing(OperationId::operation)
        .thenComparing(id -> id.key().value()));
    assertTrue(683_000L * ROWS > 2 * OperationTable.PAGE_READ_CHARS, "the rows take more than two reads");
  }

  @Test
  void aPageOfLargeRequestsEndsShortAtTheReadBudget() throws Exception {
    Instant now = T0.plusSeconds(60);
    try (JdbcJournal j = JdbcJournal.openReadOnly(dir)) {
      // About 683,000 characters a request: the budget of 4 Mi is passed at the seventh.
      int cut = (int) (OperationTable.PAGE_READ_CHARS / 683_000) + 1;
      assertEquals(pending.subList(0, cut), ids(j.findDue(now, null, 100)), "findDue");
      assertEquals(pending.subList(0, cut), ids(j.findByState(OperationState.PENDING, null, 100)), "findByState");
      assertEquals(failed.subList(0, cut), ids(j.findUndelivered(null, 100)), "findUndelivered");
      // A summary reads no request or response: its page is cut by its attempts only.
      assertEquals(failed, j.findSummariesByState(OperationState.FAILED, null, 100).stream()
          .map(OperationSummary::id).toList(), "findSummariesByState");
      List<OperationRecord> due = j.findDue(now, "app", null, 100);
      assertEquals(cut, due.size(), "findDue by owner");
      assertTrue(due.stream().allMatch(r -> r.request().bodyLength() > 500_000), "each with its whole request");
    }
  }

  @Test
  void pagesSmallerAndLargerThanAReadAddUpToEveryRowOnceInOrder() throws Exception {
    Instant now = T0.plusSeconds(60);
    try (JdbcJournal j = JdbcJournal.openReadOnly(dir)) {
      for (int size : new int[] {1, 4, 10, 100}) {
        List<OperationId> byId = new ArrayList<>();
        OperationId after = null;
        List<OperationRecord> page;
        do {
          page = j.findDue(now, after, size);
          assertTrue(page.size() <= size, "at most the page size");
          byId.addAll(ids(page));
          after = page.isEmpty() ? after : page.get(page.size() - 1).id();
        } while (!page.isEmpty());
        assertEquals(pending, byId, "findDue in pages of " + size);

        List<OperationId> byState = new ArrayList<>();
        after = null;
        do {
          page = j.findByState(OperationState.PENDING, after, size);
          byState.addAll(ids(page));
          after = page.isEmpty() ? after : page.get(page.size() - 1).id();
        } while (!page.isEmpty());
        assertEquals(pending, byState, "findByState in pages of " + size);

        List<OperationId> owed = new ArrayList<>();
        after = null;
        do {
          page = j.findUndelivered(after, size);
          owed.addAll(ids(page));
          after = page.isEmpty() ? after : page.get(page.size() - 1).id();
        } while (!page.isEmpty());
        assertEquals(failed, owed, "findUndelivered in pages of " + size);

        List<OperationId> listed = new ArrayList<>();
        after = null;
        List<OperationSummary> summaries;
        do {
          summaries = j.findSummariesByState(OperationState.FAILED, after, size);
          summaries.forEach(r -> listed.add(r.id()));
          after = summaries.isEmpty() ? after : summaries.get(summaries.size() - 1).id();
        } while (!summaries.isEmpty());
        assertEquals(failed, listed, "findSummariesByState in pages of " + size);

        List<OperationId> byOwner = new ArrayList<>();
        OperationRecord last = null;
        do {
          page = j.findDue(now, "app", last, size);
          byOwner.addAll(ids(page));
          last = page.isEmpty() ? last : page.get(page.size() - 1);
        } while (!page.isEmpty());
        assertEquals(ROWS, byOwner.size(), "findDue by owner in pages of " + size);
        assertEquals(Set.copyOf(pending), Set.copyOf(byOwner), "findDue by owner in pages of " + size);
      }
    }
  }

  private static RequestSnapshot request(int i, String pad) {
    return Ops.request("{\"n\":" + i + ",\"doc\":\"" + pad + "\"}");
  }

  private static dev.idem.core.fingerprint.Fingerprint fingerprint(int i, String pad) {
    return Fingerprinter.defaults().fingerprint(request(i, pad));
  }

  private static List<OperationId> ids(List<OperationRecord> records) {
    return records.stream().map(OperationRecord::id).toList();
  }
}
