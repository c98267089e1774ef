package dev.idem.cli;

import dev.idem.core.OperationRecord;
import dev.idem.jdbc.JdbcJournal;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * Re-drives a FAILED or UNCERTAIN operation: it becomes PENDING with the same key, and the app's
 * next resume sends it.
 */
@Command(name = "redrive", description = "Make a FAILED or UNCERTAIN operation PENDING again, same key.")
final class RedriveCommand implements Callable<Integer> {
  @Mixin
  JournalOptions journal;

  @Mixin
  OperationSelector selector;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    try (JdbcJournal j = journal.openForWriting()) {
      if (selector.find(j, spec.commandLine().getErr()).isEmpty()) {
        return 1;
      }
      try {
        OperationRecord r = j.redrive(selector.id(), Instant.now());
        spec.commandLine().getOut().println("re-driven: " + r.id() + " is " + r.state()
            + "; the app's next resume sends it with the same key");
      } catch (IllegalStateException e) {
        spec.commandLine().getErr().println(IdemCli.errorLine(e));
        return 1;
      }
    }
    return 0;
  }
}
