package dev.idem.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * One run of the CLI in this JVM, with what it printed.
 *
 * @param code the exit status
 * @param out what it printed on standard output
 * @param err what it printed on standard error
 */
record CliRun(int code, String out, String err) {
  static CliRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = IdemCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new CliRun(code, out.toString(), err.toString());
  }
}
