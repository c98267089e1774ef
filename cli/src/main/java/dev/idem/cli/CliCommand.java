package dev.idem.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** What every command shares: its streams, its usage errors, and how a bounded listing ends. */
abstract class CliCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  PrintWriter out() {
    return spec.commandLine().getOut();
  }

  PrintWriter err() {
    return spec.commandLine().getErr();
  }

  /**
   * Whether a write of the output has failed (a full disk, a reader that went away): a listing
   * then stops reading pages, since nothing more of it can be written. The exit status is
   * {@link IdemCli#main}'s to choose, from the failure itself.
   */
  boolean outputFailed() {
    return out().checkError();
  }

  /** A usage error: picocli prints it with the usage help and exits with status 2. */
  ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  /**
   * Refuses an empty or blank location ({@code --dir}, {@code --jdbc-url}, {@code --inbox},
   * {@code --store}) as bad usage naming the option. It is an unset shell variable
   * ({@code --dir "$JOURNAL_DIR"}), never a place: an empty path resolves to the current directory,
   * where {@code purge --yes} once deleted whatever journal the operator happened to stand in.
   *
   * @param value the option's value, or null when not given (the option's group decides then)
   * @return {@code value}
   */
  static <T> T requireLocation(CommandSpec spec, String option, T value) {
    if (value != null && value.toString().isBlank()) {
      throw new ParameterException(spec.commandLine(), option + " is empty (an unset shell variable?)"
          + (option.equals("--jdbc-url") ? "" : "; for the current directory, give " + option + " ."));
    }
    return value;
  }

  void requireLimit(int limit) {
    if (limit < 1) {
      // A negative limit once printed "0 operations" while operations existed.
      throw usage("--limit must be at least 1, not " + limit);
    }
  }

  /**
   * Checks an {@code --older-than} age against {@code now}: a negative age, or one reaching before
   * 1970, is bad usage naming the option. The stores keep times as epoch milliseconds, so an age
   * past 1970 once ended in the arithmetic's own "long overflow", exit 1, naming nothing.
   *
   * @return the cutoff, {@code now} minus the age
   */
  Instant olderThanCutoff(Duration olderThan, Instant now) {
    if (olderThan.isNegative()) {
      throw usage("--older-than must not be negative, not " + olderThan);
    }
    if (olderThan.compareTo(Duration.between(Instant.EPOCH, now)) > 0) {
      throw usage("--older-than " + olderThan + " reaches before 1970");
    }
    return now.minus(olderThan);
  }

  /** The last line of a listing cut at {@code --limit}: how many were shown of how many there are. */
  static String shown(long shown, long total, String what) {
    return shown == total ? total + " " + what : shown + " of " + total + " " + what + " shown; raise --limit to see more";
  }
}
