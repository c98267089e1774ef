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
    CommandLine cli = new CommandLine(new JournalCli()).setOut(out).setErr(err);
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      cmd.getErr().println("idem-journal: " + e.getMessage());
      return 1;
    });
    return cli.execute(args);
  }
}
