package dev.idem.jdbc;

import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Writes the corruption tests' fixture into an embedded journal: finished and pending operations
 * with recognisable bodies. As a child JVM's main, it then halts without closing (a killed
 * journal, its commits still in the {@code -wal} file).
 */
public final class FixtureChild {
  static final long SEED = 1313L;
  /** The body of the PENDING operation whose stored bytes the tests change. */
  static final String PENDING_BODY = "{\"amount\":4242,\"note\":\"pending-operation-body-marker\"}";

  private FixtureChild() {
  }

  /** The fixture's operations and the states they are left in. */
  static Map<OperationId, OperationState> write(Journal j) throws Exception {
    Ops ops = new Ops(SEED);
    Map<OperationId, OperationState> expected = new LinkedHashMap<>();
    for (int i = 0; i < 24; i++) {
      OperationState end = i % 4 == 0 ? OperationState.FAILED : OperationState.SUCCEEDED;
      NewOperation op = ops.newOp("{\"amount\":" + (1000 + i) + ",\"note\":\"finished-operation-" + i + "\"}");
      j.begin(op);
      Lease lease = j.claim(op.id(), "fixture", Ops.T0, Duration.ofMinutes(1)).orElseThrow();
      j.recordAttempt(op.id(), lease, Ops.attempt(1, lease.generation(), Ops.T0));
      j.transition(op.id(), lease, Transition.finish(end, Ops.T0.plusSeconds(1),
          end == OperationState.SUCCEEDED ? Ops.ok("{\"order\":" + i + "}") : null, "fixture"));
      expected.put(op.id(), end);
    }
    NewOperation pending = ops.newOp(PENDING_BODY);
    j.begin(pending);
    expected.put(pending.id(), OperationState.PENDING);
    return expected;
  }

  public static void main(String[] args) throws Exception {
    JdbcJournal j = JdbcJournal.openEmbedded(Path.of(args[0]));
    write(j);
    j.flush();
    Runtime.getRuntime().halt(HaltingJournal.HALT_CODE);
  }
}
