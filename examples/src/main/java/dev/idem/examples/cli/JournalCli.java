package dev.idem.examples.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code idem-journal}: an operator's view of an Idem journal, on an embedded journal's directory or a JDBC URL.
 * It lists operations by state, shows one with its attempt history, re-drives, purges by age and
 * prints stats. It never prints header values or bodies, only their names and sizes. list, show and
 * stats open an embedded journal read-only and never write a byte of it.
 */
@Command(name = "idem-journal", mixinStandardHelpOptions = true, version = "idem-journal 0.1",
    description = "Inspect and repair an Idem journal.",
    subcommands = {ListCommand.class, ShowCommand.class, RedriveCommand.class, PurgeCommand.class,
        StatsCommand.class, WebhooksCommand.class})
public final class JournalCli {
  /** Runs the CLI and exits with its status: 0 on success, 1 on a journal error, 2 on bad usage. */
  public static void main(String[] args) {
    System.exit(run(args));
  }

  /** Runs the CLI on the standard streams and returns its exit status. */
  public static int run(String... args) {
    return run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args);
  }

  /** Runs the CLI on the given streams and returns its exit status, for tests and embedding. */
  public static int run(PrintWriter out, PrintWriter err, String... args) {
    CommandLine cli = new CommandLine(new JournalCli()).setOut(out).setErr(err)
        // Operators type states as they read them in logs and dashboards: "failed" is FAILED.
        .setCaseInsensitiveEnumValuesAllowed(true);
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      cmd.getErr().println(errorLine(e));
      return 1;
    });
    return cli.execute(args);
  }

  /**
   * The one line an operator sees for a failure: the program's name once, then what went wrong.
   * A message that already carries the prefix (an error re-thrown by a command) is not prefixed
   * again, and an exception without a message is named by its class instead of "null".
   */
  static String errorLine(Throwable e) {
    String message = e.getMessage() == null || e.getMessage().isBlank() ? e.toString() : e.getMessage();
    while (message.startsWith(PREFIX)) {
      message = message.substring(PREFIX.length());
    }
    return PREFIX + message;
  }

  static final String PREFIX = "idem-journal: ";
}
