package dev.idem.cli;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * {@code idem}, the operators' command line: an Idem journal, a webhook inbox and a server guard's
 * records, on the embedded stores' directories and files (SQLite) or, for the journal, a JDBC URL.
 *
 * <pre>
 * java -jar idem-cli-VERSION-all.jar journal stats --dir /var/lib/myapp/idem
 * java -jar idem-cli-VERSION-all.jar journal list --dir DIR --state failed
 * java -jar idem-cli-VERSION-all.jar webhooks dead-letters --inbox /var/lib/shop/webhooks
 * java -jar idem-cli-VERSION-all.jar guard list --store /var/lib/orders/idem.db
 * </pre>
 *
 * <p>Every command that only reads (journal {@code list}, {@code show}, {@code stats} and a
 * {@code purge} without {@code --yes}; webhooks {@code dead-letters}, {@code list}, {@code stats};
 * guard {@code list}, {@code stats}) opens the store read-only: it takes no lock, so it runs beside
 * the live app, and writes no byte of the store's files. The commands that change a store
 * ({@code redrive}, {@code purge --yes}) take it over as its owner does, so they refuse to run while
 * the app has it open. Nothing ever prints a header value or a body, only names and sizes. Text
 * read from a store (a scope, a reference, a webhook's error) is printed with its control and
 * invisible format characters escaped ({@code \n}, {@code \}{@code u001b}): a forged row cannot
 * add a line to a listing or act on the terminal. A store that is not there is refused, never
 * created.
 *
 * <p>Exit status: 0 done, 1 an error with the store, or of the JVM itself such as an {@link
 * OutOfMemoryError}, or anything thrown and not caught on another thread of the process, the
 * journal's or a driver's ({@link BackgroundFailure}: the command ends at once) (one line on
 * standard error, starting {@code idem: }), 2 bad usage, 3 the output could not be written (a full disk, an I/O error; one
 * line on standard error). A reader that stops reading ({@code | head}) is not an error: the
 * command ends quietly with its own status.
 */
// INHERIT: every subcommand has --help and --version too.
@Command(name = "idem", mixinStandardHelpOptions = true, versionProvider = CliVersion.class, scope = ScopeType.INHERIT,
    description = "Inspect and repair Idem's stores: the journal, the webhook inbox, the server guard's records.",
    subcommands = {JournalCommand.class, WebhooksCommand.class, GuardCommand.class})
public final class IdemCli {
  static final String PREFIX = "idem: ";

  private IdemCli() {}

  /**
   * Runs the CLI and exits with its status: 0 on success, 1 on an error with a store, an {@link
   * Error} of the JVM, or a throwable no other thread caught (one {@code idem: } line naming it,
   * not a stack trace; for another thread, its name too, and the process ends at once), 2 on bad
   * usage, 3
   * when the output could not be written (a full disk; not a reader that went away, which
   * ends the command quietly with its own status).
   *
   * @param args the command line, such as {@code journal stats --dir DIR}
   */
  public static void main(String[] args) {
    // A program that speaks for itself: Idem's own warnings (a recovered in-flight operation) would
    // print before its output. Errors still show; -Dorg.slf4j.simpleLogger.defaultLogLevel overrides.
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
    }
    // The same for the libraries that log through java.util.logging (the PostgreSQL driver warns of
    // a bad port in two lines, a timestamp first, before the one idem: line). A logging
    // configuration of the operator's own (-Djava.util.logging.config.file) is left as it is.
    if (System.getProperty("java.util.logging.config.file") == null
        && System.getProperty("java.util.logging.config.class") == null) {
      Logger.getLogger("").setLevel(Level.SEVERE);
    }
    // Not System.out: it keeps only "an error happened", and a full disk must fail the command
    // where a reader that stopped (| head) must not. This stream keeps the failure itself.
    FailureRecordingOutputStream stdout = new FailureRecordingOutputStream(new FileOutputStream(FileDescriptor.out));
    // Both in the charset System.out and System.err would use, with what it cannot encode escaped
    // rather than printed as '?' (EncodableWriter).
    PrintWriter out = new PrintWriter(EncodableWriter.of(stdout, stdoutCharset()), true);
    PrintWriter err = new PrintWriter(EncodableWriter.of(System.err, charset("stderr.encoding", "sun.stderr.encoding")),
        true);
    // Every other thread of the process (the journal's, a driver's): one line and status 1 too,
    // not the JVM's stack trace and a command that goes on.
    Thread.setDefaultUncaughtExceptionHandler(new BackgroundFailure(err, out::flush, Runtime.getRuntime()::halt));
    int status;
    try {
      status = run(out, err, args);
    } catch (Error e) {
      // picocli's handler takes exceptions only: an Error (the heap exhausted, a class missing from
      // a hand-made class path) would otherwise end the program with the JVM's stack trace.
      status = 1;
      try {
        err.println(jvmErrorLine(e));
      } catch (Error again) {
        // Not even one line could be made: the status still says the command failed.
      }
    }
    out.flush();
    System.exit(OutputFailure.exitStatus(status, stdout.failure(), OutputFailure::standardOutputIsPipeOrSocket, err));
  }

  /**
   * The charset {@code System.out} would encode with: {@code stdout.encoding} (Java 19 on),
   * {@code sun.stdout.encoding} (Java 17, set for a console), else the platform's default.
   */
  private static Charset stdoutCharset() {
    return charset("stdout.encoding", "sun.stdout.encoding");
  }

  /** The charset the first of {@code properties} names that the JDK supports, else the platform's default. */
  private static Charset charset(String... properties) {
    for (String property : properties) {
      String name = System.getProperty(property);
      try {
        if (name != null && Charset.isSupported(name)) {
          return Charset.forName(name);
        }
      } catch (IllegalArgumentException e) {
        // A name the JDK cannot read: the default, as System.out takes it then.
      }
    }
    return Charset.defaultCharset();
  }

  /**
   * Runs the CLI on the given streams and returns its exit status, for tests and embedding.
   *
   * @param out where results go
   * @param err where errors and usage go
   * @param args the command line, such as {@code journal stats --dir DIR}
   * @return 0 on success, 1 on an error with a store, 2 on bad usage; a failed write of {@code out}
   *     is the caller's to notice ({@link PrintWriter#checkError}): a listing stops early after one
   * @throws Error an {@link Error} of the JVM (such as {@link OutOfMemoryError}) as it was thrown:
   *     the embedding program decides, as {@link #main} does with its one line
   */
  public static int run(PrintWriter out, PrintWriter err, String... args) {
    CommandLine cli = new CommandLine(new IdemCli()).setOut(out).setErr(err)
        // Operators type states as they read them in logs and dashboards: "failed" is FAILED.
        .setCaseInsensitiveEnumValuesAllowed(true);
    cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
      cmd.getErr().println(errorLine(e));
      return 1;
    });
    // picocli's own handler, but with the message redacted: picocli quotes the values it refuses
    // (a --jdbc-url given twice, an unmatched argument), and a URL may carry a password, and so may
    // a mistyped option (--pasword=hunter2: UsageErrorText).
    cli.setParameterExceptionHandler((e, given) -> {
      CommandLine cmd = e.getCommandLine();
      PrintWriter w = cmd.getErr();
      String message = UsageErrorText.withoutOptionValues(String.valueOf(e.getMessage()), cmd.getCommandSpec(), given);
      // Prefixed as every other error line is: a usage error is an error too, and a script or an
      // operator searching a log for "idem: " finds it.
      w.println(cmd.getColorScheme().errorText(PREFIX + JournalOptions.redacted(message)));
      if (!UnmatchedArgumentException.printSuggestions(e, w)) {
        cmd.usage(w, cmd.getColorScheme());
      }
      return cmd.getExitCodeExceptionMapper() != null ? cmd.getExitCodeExceptionMapper().getExitCode(e)
          : cmd.getCommandSpec().exitCodeOnInvalidInput();
    });
    return cli.execute(args);
  }

  /**
   * The one line for an {@link Error} that ended a command: named by its class, since its message
   * alone ("Java heap space") does not say what happened, and for a class missing from the class
   * path, by the library it belongs to ({@link MissingLibrary}).
   */
  static String jvmErrorLine(Error e) {
    String why = e instanceof OutOfMemoryError ? "the JVM ran out of memory: start it with a larger -Xmx"
        : MissingLibrary.explain(e).orElse(null);
    return PREFIX + TerminalText.safe(e.toString()) + (why != null ? " (" + why + ")" : "");
  }

  /**
   * The one line an operator sees for a failure: the program's name once, then what went wrong.
   * A message that already carries the prefix (an error re-thrown by a command) is not prefixed
   * again, and an exception without a message is named by its class instead of "null". A message
   * may quote a store's text (an identity, a driver's multi-line error), so it is escaped
   * ({@link TerminalText#safe}): one line, nothing a terminal acts on.
   */
  static String errorLine(Throwable e) {
    String message = e.getMessage() == null || e.getMessage().isBlank() ? e.toString() : e.getMessage();
    while (message.startsWith(PREFIX)) {
      message = message.substring(PREFIX.length());
    }
    return PREFIX + TerminalText.safe(message);
  }
}
