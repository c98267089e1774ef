package dev.idem.cli;

import dev.idem.core.AttemptRecord;
import dev.idem.core.OperationRecord;
import dev.idem.jdbc.JdbcJournal;
import java.time.Duration;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Re-drives a FAILED or UNCERTAIN operation: it becomes PENDING with the same key, and the app's
 * next resume sends it. Unconditional ({@code Journal.redrive}, not {@code redriveIfUnchanged}): the
 * operator re-drives the operation they named in whichever of the two states it is in, as
 * {@code IdempotentExecutor.redrive} does. The age limit of queued delivery ({@code maxPendingAge})
 * restarts at the re-drive only for an operation no attempt of which may have reached the server;
 * otherwise it keeps counting from the creation (see {@code Journal.redrive}), and a re-drive past
 * it is warned about, since the app's next resume ends the operation again, unsent.
 */
@Command(name = "redrive", description = {"Make a FAILED or UNCERTAIN operation PENDING again, same key.",
    "If no attempt may have reached the server (never sent, or only refused connections), its age limit"
        + " (maxPendingAge) restarts at the re-drive, so queued delivery sends it even if it ended at its age limit."
        + " Otherwise the age limit keeps counting from its creation: the server's key retention may have started at"
        + " that attempt. Past it, the re-drive sends nothing (the next resume ends it UNCERTAIN again) and a warning"
        + " says so: reconcile it, and if its effect does not exist send it again as a new operation (a new key)."})
final class RedriveCommand extends OperationCommand {
  private static final Logger LOG = LoggerFactory.getLogger(RedriveCommand.class);

  /** The app's age limit, known only to the app: the executor's default unless told. */
  @Option(names = "--max-pending-age", paramLabel = "DURATION", defaultValue = "PT18H",
      description = "The app's maxPendingAge (ISO-8601, default ${DEFAULT-VALUE}, the executor's default), for the"
          + " warning about a re-drive past it.")
  Duration maxPendingAge;

  @Override
  boolean writes() {
    return true;
  }

  @Override
  int act(JdbcJournal j, OperationRecord found) throws Exception {
    try {
      Instant now = Instant.now();
      OperationRecord r = j.redrive(found.id(), now);
      out().println("re-driven: " + TerminalText.safe(r.id()) + " is " + r.state() + "; the app's next resume sends it with the same key");
      if (r.attempts().stream().anyMatch(AttemptRecord::mayHaveReachedServer)
          && !now.isBefore(r.createdAt().plus(maxPendingAge))) {
        String warning = "operation " + r.id() + " was re-driven past its age limit (maxPendingAge " + maxPendingAge
            + " after its creation at " + r.createdAt() + ") after an attempt that may have reached the server, which"
            + " may have forgotten its key: the app's next resume ends it UNCERTAIN again, unsent (under"
            + " ExpiredPendingAction.RESEND it resends it with that key, unprotected). Reconcile it, and if its effect"
            + " does not exist send it again as a new operation (a new key)";
        LOG.warn("{}", warning);
        err().println(IdemCli.PREFIX + "warning: " + TerminalText.safe(warning));
      }
      return 0;
    } catch (IllegalStateException e) {
      err().println(IdemCli.errorLine(e));
      return 1;
    }
  }
}
