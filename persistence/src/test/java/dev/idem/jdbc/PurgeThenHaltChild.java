package dev.idem.jdbc;

import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;

/**
 * A child JVM of {@link JournalKillTest}: finishes and purges operations, begins one more, and
 * halts. If the journal's log replayed writes from before the purge, the purged operations would
 * come back at the next open.
 *
 * <p>Arguments: journal directory, number of operations to finish and purge.
 */
public final class PurgeThenHaltChild {
  static final long SEED = 41L;

  private PurgeThenHaltChild() {
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int count = Integer.parseInt(args[1]);
    Ops ops = new Ops(SEED);
    JdbcJournal journal = JdbcJournal.openEmbedded(dir);
    for (int i = 0; i < count; i++) {
      NewOperation op = ops.newOp("{\"n\":" + i + "}");
      journal.begin(op);
      Lease lease = journal.claim(op.id(), "child", Ops.T0, Duration.ofMinutes(1)).orElseThrow();
      journal.transition(op.id(), lease, Transition.finish(OperationState.SUCCEEDED, Ops.T0, Ops.ok("{}"), null));
    }
    int purged = journal.purge(Instant.parse("2100-01-01T00:00:00Z"));
    if (purged != count) {
      System.out.println("purged " + purged + " of " + count);
      System.exit(1);
    }
    journal.begin(ops.newOp("{\"after\":\"the purge\"}"));
    Runtime.getRuntime().halt(HaltingJournal.HALT_CODE);
  }
}
