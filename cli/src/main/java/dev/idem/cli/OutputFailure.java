package dev.idem.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.function.BooleanSupplier;

/**
 * What a failed write of standard output means for the exit status.
 *
 * <ul>
 *   <li>The reader went away ({@code EPIPE}: {@code idem --version | head -1}, a pager quit): the
 *       command ends quietly with its own status, as Unix tools do. The reader asked for no more;
 *       under {@code set -o pipefail} an error here would fail every {@code | head}.
 *   <li>Any other failure ({@code ENOSPC} "No space left on device", {@code EIO}, ...): the output
 *       the operator asked for is lost or cut, so one line on standard error names the failure and
 *       a command that otherwise succeeded exits with {@link #STATUS}, never 0: a script must not
 *       go on with an empty or cut listing. A command that already failed keeps its own status.
 * </ul>
 *
 * <p>The JDK says which failure it was only in the exception's message: an {@code IOException}
 * carrying {@code strerror}'s text, no errno. That text follows the locale ({@code LC_MESSAGES}):
 * "Broken pipe" in English, other words in other languages. So a second sign counts as well:
 * standard output is a pipe or a socket. On those, a failed write is the reader gone; they have no
 * disk to fill.
 */
final class OutputFailure {
  /** The exit status of a command whose output could not be written (a full disk, an I/O error). */
  static final int STATUS = 3;

  private static final int FILE_TYPE = 0170000;
  private static final int FIFO = 0010000;
  private static final int SOCKET = 0140000;

  private OutputFailure() {}

  /**
   * The status to exit with, given the command's own and the first failed write of standard
   * output; prints the error line when the failure is not a reader gone away.
   *
   * @param outputIsPipeOrSocket whether standard output is a pipe or a socket, asked only after a
   *     failure and only when the message does not say "broken pipe"
   */
  static int exitStatus(int status, Optional<IOException> failure, BooleanSupplier outputIsPipeOrSocket,
      PrintWriter err) {
    if (failure.isEmpty() || readerGone(failure.get(), outputIsPipeOrSocket)) {
      return status;
    }
    IOException e = failure.get();
    String why = e.getMessage() == null || e.getMessage().isBlank() ? e.toString() : e.getMessage();
    err.println(IdemCli.PREFIX + "standard output could not be written (" + TerminalText.safe(why)
        + "): what was printed is incomplete");
    return status == 0 ? STATUS : status;
  }

  static boolean readerGone(IOException e, BooleanSupplier outputIsPipeOrSocket) {
    String message = e.getMessage();
    return message != null && message.toLowerCase(Locale.ROOT).contains("broken pipe")
        || outputIsPipeOrSocket.getAsBoolean();
  }

  /**
   * Whether this process's standard output (file descriptor 1) is a pipe or a socket, read on
   * Linux through {@code /proc/self/fd/1}; false where that cannot be read (the message decides).
   */
  static boolean standardOutputIsPipeOrSocket() {
    try {
      int type = (Integer) Files.getAttribute(Path.of("/proc/self/fd/1"), "unix:mode") & FILE_TYPE;
      return type == FIFO || type == SOCKET;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }
}
