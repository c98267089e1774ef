package dev.idem.examples.corruption;

import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** The client's embedded journal: finished operations with stored responses, and pending ones. */
final class JournalSubject implements Subject {
  private static final int OPERATIONS = 40;

  @Override
  public String name() {
    return "journal";
  }

  @Override
  public String databaseFile() {
    return "idem-journal.db";
  }

  private static List<NewOperation> operations() {
    Ops ops = new Ops(2626);
    return java.util.stream.IntStream.range(0, OPERATIONS)
        .mapToObj(i -> ops.newOp("{\"amount\":" + (1000 + i) + ",\"note\":\"operation-" + i + "\"}")).toList();
  }

  private static void write(JdbcJournal j) throws IdempotencyException {
    int i = 0;
    for (NewOperation op : operations()) {
      j.begin(op);
      if (i % 5 != 4) { // every fifth stays PENDING
        Lease lease = j.claim(op.id(), "fixture", Ops.T0, Duration.ofMinutes(1)).orElseThrow();
        j.recordAttempt(op.id(), lease, Ops.attempt(1, lease.generation(), Ops.T0));
        OperationState end = i % 5 == 3 ? OperationState.FAILED : OperationState.SUCCEEDED;
        j.transition(op.id(), lease, Transition.finish(end, Ops.T0.plusSeconds(1),
            end == OperationState.SUCCEEDED ? Ops.ok("{\"order\":" + i + ",\"total\":\"" + (17 * i) + ".00\"}")
                : null, "fixture"));
      }
      i++;
    }
    j.flush();
  }

  @Override
  public void writeAndClose(Path dir) throws Exception {
    try (JdbcJournal j = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
      write(j);
    }
  }

  @Override
  public void writeAndHalt(Path dir) throws Exception {
    write(JdbcJournal.embedded(dir).closeOnShutdown(false).open());
    Runtime.getRuntime().halt(HALT_CODE);
  }

  @Override
  public Map<String, String> read(Path dir) throws Exception {
    Map<String, String> picture = new TreeMap<>();
    try (JdbcJournal j = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
      for (NewOperation op : operations()) {
        Optional<OperationRecord> r;
        try {
          r = j.find(op.id());
        } catch (IdempotencyException e) {
          picture.put(op.id().key().value(), SAID);
          continue;
        }
        picture.put(op.id().key().value(), r.map(JournalSubject::describe).orElse("missing"));
      }
      // A finished operation that is due would be sent again: part of the picture.
      // Paged to an empty page: a journal may end a page short while more follow.
      Instant later = Instant.parse("2200-01-01T00:00:00Z");
      OperationId after = null;
      for (List<OperationRecord> page; !(page = j.findDue(later, after, 1000)).isEmpty(); ) {
        for (OperationRecord due : page) {
          picture.merge(due.id().key().value(), " due", String::concat);
        }
        after = page.get(page.size() - 1).id();
      }
    }
    return picture;
  }

  private static String describe(OperationRecord r) {
    return r.state() + " request=" + Arrays.hashCode(r.request().body()) + " response="
        + (r.response() == null ? "none" : r.response().status() + ":" + Arrays.hashCode(r.response().body()));
  }
}
