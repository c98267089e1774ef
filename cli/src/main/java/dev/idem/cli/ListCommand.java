package dev.idem.cli;

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
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Lists operations, in one state or in all of them (state by state, in key order), fetched a page
 * at a time so that a journal of millions of rows is never held in memory.
 */
@Command(name = "list", description = "List operations, in one state or all.")
final class ListCommand implements Callable<Integer> {
  /** Rows fetched per query: bounded memory whatever --limit says. */
  static final int PAGE = 500;

  @Mixin
  JournalOptions journal;

  @Option(names = "--state", description = "One of ${COMPLETION-CANDIDATES}, in any case (default: all states).")
  OperationState state;

  @Option(names = "--limit", defaultValue = "100", description = "Print at most this many, at least 1 (default: ${DEFAULT-VALUE}).")
  int limit;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (limit < 1) {
      // A negative limit once printed "0 operations" while operations existed.
      throw new ParameterException(spec.commandLine(), "--limit must be at least 1, not " + limit);
    }
    PrintWriter out = spec.commandLine().getOut();
    List<OperationState> states = state != null ? List.of(state) : List.of(OperationState.values());
    try (JdbcJournal j = journal.openReadOnly()) {
      int printed = 0;
      long total = 0;
      for (OperationState s : states) {
        total += j.count(s);
        OperationId after = null;
        while (printed < limit) {
          List<OperationRecord> page = j.findByState(s, after, Math.min(PAGE, limit - printed));
          page.forEach(r -> RecordPrinter.line(out, r));
          printed += page.size();
          if (page.isEmpty()) {
            break;
          }
          after = page.get(page.size() - 1).id();
        }
      }
      String what = state != null ? state + " operation(s)" : "operation(s)";
      out.println(printed == total ? total + " " + what
          : printed + " of " + total + " " + what + " shown; raise --limit to see more");
    }
    return 0;
  }
}
