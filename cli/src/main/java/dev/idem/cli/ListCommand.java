package dev.idem.cli;

import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.OperationSummary;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Lists operations, in one state or in all of them (state by state, in key order), fetched a page
 * at a time so that a journal of millions of rows is never held in memory, each page as summaries
 * ({@link JdbcJournal#findSummariesByState}): a page of whole records held every request body and
 * stored response, which the listing never prints, and 30 operations with 512 KiB bodies (the
 * journal's default maximum) exhausted a 64 MiB heap.
 */
@Command(name = "list", description = "List operations, in one state or all.")
final class ListCommand extends CliCommand {
  /**
   * Rows fetched per query: bounded memory whatever --limit says, and whatever the bodies are (a
   * summary holds none).
   */
  static final int PAGE = 500;

  @Mixin
  JournalOptions journal;

  @Option(names = "--state", description = "One of ${COMPLETION-CANDIDATES}, in any case (default: all states).")
  OperationState state;

  @Option(names = "--limit", defaultValue = "100", description = "Print at most this many, at least 1 (default: ${DEFAULT-VALUE}).")
  int limit;

  @Override
  public Integer call() throws Exception {
    requireLimit(limit);
    PrintWriter out = out();
    List<OperationState> states = state != null ? List.of(state) : List.of(OperationState.values());
    try (JdbcJournal j = journal.openReadOnly()) {
      int printed = 0;
      long total = 0;
      for (OperationState s : states) {
        total += j.count(s);
        OperationId after = null;
        while (printed < limit && !outputFailed()) {
          List<OperationSummary> page = j.findSummariesByState(s, after, Math.min(PAGE, limit - printed));
          page.forEach(r -> RecordPrinter.line(out, r));
          printed += page.size();
          if (page.isEmpty()) {
            break;
          }
          after = page.get(page.size() - 1).id();
        }
      }
      String what = state != null ? state + " operation(s)" : "operation(s)";
      if (printed < limit && printed < total) {
        // Every row that can be read was listed: the rest of the count are rows a read skips
        // because they cannot be decoded, which no --limit would show.
        out.println(printed + " of " + total + " " + what + " shown; the other " + (total - printed)
            + " cannot be read (damaged rows): the app sets them aside (quarantines them) when it next reads them,"
            + " and purge --yes does too.");
      } else {
        out.println(shown(printed, total, what));
      }
    }
    return 0;
  }
}
