package dev.idem.cli;

import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.OperationSummary;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Deletes finished operations last updated longer ago than a given age. Pending ones are never
 * purged, nor are finished ones whose outcome is still owed to the app's handler (queued, and not
 * yet handed over: {@code Journal.purge} keeps them for the app's next {@code resumePending}); both
 * runs count those apart. Without {@code --yes} it only says what it would delete, reading the
 * journal read-only: a deleted record is a key the app can no longer recognise, so the operator
 * confirms first. Both runs read what a listing shows, not the request or stored response (see
 * {@link #scan}): a finished row damaged only there is listed by the dry run and deleted by
 * {@code --yes} as the others are.
 */
@Command(name = "purge", description = "Delete SUCCEEDED, FAILED and UNCERTAIN operations older than an age,"
    + " except those whose outcome the app's handler has not received yet (without --yes: only show what would"
    + " be deleted).")
final class PurgeCommand extends CliCommand {
  /** Candidates printed one per line in a dry run; the rest are counted. */
  static final int SHOWN = 20;
  /** Why an old finished operation is kept, for both runs. */
  static final String OWED = "their outcome is owed to the app's handler (queued, not handed over yet);"
      + " the app's next resumePending with a handler for the name (or a running OutboxDispatcher, for a name"
      + " registered with outcome callbacks) hands it over, and a purge after that deletes them.";

  @Mixin
  JournalOptions journal;

  @Option(names = "--older-than", required = true, paramLabel = "DURATION",
      description = "ISO-8601 duration, such as P7D or PT12H: last updated longer ago than this.")
  Duration olderThan;

  @Option(names = "--yes", description = "Delete. Without it, purge only prints what it would delete.")
  boolean yes;

  @Override
  public Integer call() throws Exception {
    Instant cutoff = olderThanCutoff(olderThan, Instant.now());
    PrintWriter out = out();
    if (!yes) {
      try (JdbcJournal j = journal.openReadOnly()) {
        Scan scan = scan(j, cutoff, out);
        out.println("would purge " + scan.candidates + " finished operation(s) last updated before " + cutoff
            + "; nothing was deleted. Run again with --yes to delete them.");
        if (scan.owed > 0) {
          out.println(scan.owed + " more finished operation(s) that old are kept: " + OWED);
        }
        if (scan.unreadable > 0) {
          out.println(scan.unreadable + " finished operation(s) cannot be read (damaged rows) and are not counted:"
              + " purge --yes sets them aside (quarantines them, for inspection) and deletes none of them.");
        }
      }
      return 0;
    }
    try (JdbcJournal j = journal.openForWriting()) {
      // Read first, as the dry run does: reading a row that cannot be decoded quarantines it, and
      // purge skips quarantined rows, so it deletes what a dry run showed, never a damaged row
      // nobody saw (a count and a deletion that disagreed with the dry run's listing).
      Scan scan = scan(j, cutoff, null);
      int n = j.purge(cutoff);
      out.println("purged " + n + " finished operation(s) older than " + olderThan);
      if (scan.owed > 0) {
        out.println(scan.owed + " finished operation(s) that old were kept: " + OWED);
      }
      if (scan.unreadable > 0) {
        out.println(scan.unreadable + " finished operation(s) could not be read (damaged rows): quarantined for"
            + " inspection, not deleted.");
      }
    }
    return 0;
  }

  /**
   * What a purge at {@code cutoff} would delete: the finished operations read, the ones older than
   * the cutoff (the first {@link #SHOWN} printed, if {@code out} is given) but those whose outcome
   * is owed to a handler (counted apart, as the journal's purge keeps them), and those a read skips
   * because their row cannot be decoded (counted by state, never listed). It reads summaries
   * ({@link JdbcJournal#findSummariesByState}), a page of which holds no body: whole records held
   * every request body and stored response of a page of 500, and ran out of a small heap.
   */
  private static Scan scan(JdbcJournal j, Instant cutoff, PrintWriter out) throws Exception {
    Scan scan = new Scan();
    for (OperationState state : OperationState.values()) {
      if (!state.isTerminal()) {
        continue;
      }
      long counted = j.count(state);
      long read = 0;
      OperationId after = null;
      while (true) {
        List<OperationSummary> page = j.findSummariesByState(state, after, ListCommand.PAGE);
        for (OperationSummary r : page) {
          read++;
          if (r.updatedAt().isBefore(cutoff) && r.outcomeUndelivered()) {
            scan.owed++;
          } else if (r.updatedAt().isBefore(cutoff)) {
            if (out != null && scan.candidates < SHOWN) {
              RecordPrinter.line(out, r);
            }
            scan.candidates++;
          }
        }
        if (page.isEmpty()) {
          break;
        }
        after = page.get(page.size() - 1).id();
      }
      scan.unreadable += Math.max(0, counted - read);
    }
    return scan;
  }

  /** The counts of {@link #scan}. */
  private static final class Scan {
    long candidates;
    long owed;
    long unreadable;
  }
}
