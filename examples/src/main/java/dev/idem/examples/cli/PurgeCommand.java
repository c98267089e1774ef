package dev.idem.examples.cli;

import dev.idem.jdbc.JdbcJournal;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Deletes finished operations older than a given age. Pending ones are never purged. */
@Command(name = "purge", description = "Delete SUCCEEDED, FAILED and UNCERTAIN operations older than an age.")
final class PurgeCommand implements Callable<Integer> {
  @Mixin
  JournalOptions journal;

  @Option(names = "--older-than", required = true, paramLabel = "DURATION",
      description = "ISO-8601 duration, such as P7D or PT12H.")
  Duration olderThan;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (olderThan.isNegative()) {
      spec.commandLine().getErr().println("idem-journal: --older-than must not be negative");
      return 2;
    }
    try (JdbcJournal j = journal.openForWriting()) {
      int n = j.purge(Instant.now().minus(olderThan));
      spec.commandLine().getOut().println("purged " + n + " finished operation(s) older than " + olderThan);
    }
    return 0;
  }
}
