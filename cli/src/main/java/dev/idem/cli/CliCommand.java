package dev.idem.cli;

import java.io.PrintWriter;
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

  /** A usage error: picocli prints it with the usage help and exits with status 2. */
  ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  void requireLimit(int limit) {
    if (limit < 1) {
      // A negative limit once printed "0 operations" while operations existed.
      throw usage("--limit must be at least 1, not " + limit);
    }
  }

  /** The last line of a listing cut at {@code --limit}: how many were shown of how many there are. */
  static String shown(long shown, long total, String what) {
    return shown == total ? total + " " + what : shown + " of " + total + " " + what + " shown; raise --limit to see more";
  }
}
