package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;

import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The child JVM of {@link CloseDuringExitTest}: an app whose main thread finishes
 * {@link #OPERATIONS} operations on the embedded journal (deferred commits: only the close makes
 * the last ones durable) and then closes the journal itself, as a main that closes its resources
 * at the end does. The parent stops that close where it wants with a debugger and sends SIGTERM.
 *
 * <p>Arguments: journal directory, the shutdown hook's bound on the close in milliseconds.
 */
public final class CloseOnMainChild {
  static final long SEED = 31;
  static final int OPERATIONS = 3;

  private CloseOnMainChild() {
  }

  public static void main(String[] args) throws Exception {
    JdbcJournal journal = JdbcJournal.embedded(Path.of(args[0])).deferredCommitInterval(Duration.ofHours(1))
        .shutdownCloseTimeout(Duration.ofMillis(Long.parseLong(args[1]))).open();
    Ops ops = new Ops(SEED);
    for (int i = 0; i < OPERATIONS; i++) {
      NewOperation op = ops.newOp("{\"n\":" + i + "}");
      journal.begin(op);
      Lease lease = journal.claim(op.id(), "child", T0, Duration.ofMinutes(1)).orElseThrow();
      journal.transition(op.id(), lease, Transition.finish(OperationState.SUCCEEDED, T0, Ops.ok("{}"), null));
    }
    System.out.println("CLOSING");
    journal.close();
    System.out.println("CLOSED");
  }
}
