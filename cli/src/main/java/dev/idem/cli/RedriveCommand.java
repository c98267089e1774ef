package dev.idem.cli;

import dev.idem.core.OperationRecord;
import dev.idem.jdbc.JdbcJournal;
import java.time.Instant;
import picocli.CommandLine.Command;

/**
 * Re-drives a FAILED or UNCERTAIN operation: it becomes PENDING with the same key, and the app's
 * next resume sends it. Unconditional ({@code Journal.redrive}, not {@code redriveIfUnchanged}): the
 * operator re-drives the operation they named in whichever of the two states it is in, as
 * {@code IdempotentExecutor.redrive} does. The operation counts as created at the re-drive, so
 * queued delivery's age limit ({@code maxPendingAge}) counts from it (see {@code Journal.redrive}).
 */
@Command(name = "redrive", description = {"Make a FAILED or UNCERTAIN operation PENDING again, same key.",
    "Its age limit (maxPendingAge) counts from the re-drive: the operation counts as created now, so queued"
        + " delivery sends it even if it ended at its age limit. Re-drive an UNCERTAIN operation only once you"
        + " know its effect does not exist: past the server's key retention a duplicate is not caught."})
final class RedriveCommand extends OperationCommand {
  @Override
  boolean writes() {
    return true;
  }

  @Override
  int act(JdbcJournal j, OperationRecord found) throws Exception {
    try {
      OperationRecord r = j.redrive(found.id(), Instant.now());
      out().println("re-driven: " + TerminalText.safe(r.id()) + " is " + r.state() + "; the app's next resume sends it with the same key");
      return 0;
    } catch (IllegalStateException e) {
      err().println(IdemCli.errorLine(e));
      return 1;
    }
  }
}
