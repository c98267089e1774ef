package dev.idem.cli;

import dev.idem.core.OperationRecord;
import dev.idem.jdbc.JdbcJournal;
import java.io.PrintWriter;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Shows one operation with its attempt history. */
@Command(name = "show", description = "Show one operation and its attempts.")
final class ShowCommand implements Callable<Integer> {
  @Mixin
  JournalOptions journal;

  @Mixin
  OperationSelector selector;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    try (JdbcJournal j = journal.openReadOnly()) {
      Optional<OperationRecord> r = selector.find(j, spec.commandLine().getErr());
      if (r.isEmpty()) {
        return 1;
      }
      RecordPrinter.detail(spec.commandLine().getOut(), r.get());
    }
    return 0;
  }
}
