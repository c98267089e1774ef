package dev.idem.examples.cli;

import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Lists operations in one state, a page at a time. */
@Command(name = "list", description = "List operations by state.")
final class ListCommand implements Callable<Integer> {
  @Mixin
  JournalOptions journal;

  @Option(names = "--state", required = true, description = "One of ${COMPLETION-CANDIDATES}.")
  OperationState state;

  @Option(names = "--limit", defaultValue = "100", description = "At most this many (default: ${DEFAULT-VALUE}).")
  int limit;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    try (JdbcJournal j = journal.openReadOnly()) {
      int printed = 0;
      OperationId after = null;
      while (printed < limit) {
        List<OperationRecord> page = j.findByState(state, after, Math.min(500, limit - printed));
        page.forEach(r -> RecordPrinter.line(out, r));
        printed += page.size();
        if (page.isEmpty()) {
          break;
        }
        after = page.get(page.size() - 1).id();
      }
      out.println(printed + " " + state + " operation(s)");
    }
    return 0;
  }
}
