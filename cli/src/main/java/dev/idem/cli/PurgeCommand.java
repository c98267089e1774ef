package dev.idem.cli;

import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Deletes finished operations last updated longer ago than a given age. Pending ones are never
 * purged. Without {@code --yes} it only says what it would delete, reading the journal read-only:
 * a deleted record is a key the app can no longer recognise, so the operator confirms first.
 */
@Command(name = "purge", description = "Delete SUCCEEDED, FAILED and UNCERTAIN operations older than an age"
    + " (without --yes: only show what would be deleted).")
final class PurgeCommand extends CliCommand {
  /** Candidates printed one per line in a dry run; the rest are counted. */
  static final int SHOWN = 20;

  @Mixin
  JournalOptions journal;

  @Option(names = "--older-than", required = true, paramLabel = "DURATION",
      description = "ISO-8601 duration, such as P7D or PT12H: last updated longer ago than this.")
  Duration olderThan;

  @Option(names = "--yes", description = "Delete. Without it, purge only prints what it would delete.")
  boolean yes;

  @Override
  public Integer call() throws Exception {
    if (olderThan.isNegative()) {
      throw usage("--older-than must not be negative, not " + olderThan);
    }
    Instant now = Instant.now();
    if (olderThan.compareTo(Duration.between(Instant.EPOCH, now)) > 0) {
      throw usage("--older-than " + olderThan + " reaches before 1970");
    }
    Instant cutoff = now.minus(olderThan);
    PrintWriter out = out();
    if (!yes) {
      try (JdbcJournal j = journal.openReadOnly()) {
        long n = 0;
        for (OperationState s : OperationState.values()) {
          if (s.isTerminal()) {
            n += candidates(j, s, cutoff, out, n);
          }
        }
        out.println("would purge " + n + " finished operation(s) last updated before " + cutoff
            + "; nothing was deleted. Run again with --yes to delete them.");
      }
      return 0;
    }
    try (JdbcJournal j = journal.openForWriting()) {
      int n = j.purge(cutoff);
      out.println("purged " + n + " finished operation(s) older than " + olderThan);
    }
    return 0;
  }

  /** Counts (and prints the first few of) the records in {@code state} that purge would delete. */
  private static long candidates(JdbcJournal j, OperationState state, Instant cutoff, PrintWriter out, long shownSoFar)
      throws Exception {
    long n = 0;
    OperationId after = null;
    while (true) {
      List<OperationRecord> page = j.findByState(state, after, ListCommand.PAGE);
      for (OperationRecord r : page) {
        if (r.updatedAt().isBefore(cutoff)) {
          if (shownSoFar + n < SHOWN) {
            RecordPrinter.line(out, r);
          }
          n++;
        }
      }
      if (page.size() < ListCommand.PAGE) {
        return n;
      }
      after = page.get(page.size() - 1).id();
    }
  }
}
