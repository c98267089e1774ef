package dev.idem.cli;

import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Counts per state, and the age of the oldest pending operation: the seeds' three health numbers. */
@Command(name = "stats", description = "Count operations per state and show the oldest pending age.")
final class StatsCommand extends CliCommand {
  @Mixin
  JournalOptions journal;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = out();
    try (JdbcJournal j = journal.openReadOnly()) {
      for (OperationState s : OperationState.values()) {
        out.printf(Locale.ROOT, "%-10s %d%n", s, j.count(s));
      }
      j.oldestCreatedAt(OperationState.PENDING).ifPresent(t ->
          out.println("oldest PENDING age: " + Duration.between(t, Instant.now()).withNanos(0)));
    }
    return 0;
  }
}
