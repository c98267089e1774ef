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

  /**
   * The app's age limit, known only to the app. Not defaulted: an app's {@code maxPendingAge} is by
   * default three quarters of its {@code serverKeyRetention}, which the CLI cannot see, and a guessed
   * limit told operators the opposite of what the app then did (a warning to send the order again
   * under a new key for an operation the app still resent with the old one: two effects).
   */
  @Option(names = "--max-pending-age", paramLabel = "DURATION",
      description = "The app's maxPendingAge (ISO-8601, e.g. PT18H, the executor's default for the default"
          + " serverKeyRetention of 24 h). With it, a re-drive of an operation an attempt of which may have reached the"
          + " server says whether the app's next resume sends it; without it, the CLI says what that depends on.")
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
      String name = TerminalText.safe(r.id());
      if (r.attempts().stream().noneMatch(AttemptRecord::mayHaveReachedServer)) {
        // Begun anew: its age limit counts from now (Journal.redrive), whatever the app's limit is.
        out().println("re-driven: " + name + " is " + r.state() + "; the app's next resume sends it with the same key");
        return 0;
      }
      out().println("re-driven: " + name + " is " + r.state() + "; an attempt may have reached the server, so its age"
          + " limit counts from its creation at " + r.createdAt());
      if (maxPendingAge == null) {
        String warning = "operation " + r.id() + " was created " + age(now, r.createdAt()) + " ago and an attempt of it"
            + " may have reached the server: the app's next resume sends it with the same key only if it is within the"
            + " app's maxPendingAge (by default three quarters of its serverKeyRetention: PT18H for the default 24 h);"
            + " past that, the resume ends it UNCERTAIN without sending it. Give --max-pending-age with the app's value"
            + " for a definite answer";
        LOG.warn("{}", warning);
        err().println(IdemCli.PREFIX + "warning: " + TerminalText.safe(warning));
      } else if (!now.isBefore(r.createdAt().plus(maxPendingAge))) {
        String warning = "operation " + r.id() + " was re-driven past its age limit (maxPendingAge " + maxPendingAge
            + " after its creation at " + r.createdAt() + ") after an attempt that may have reached the server, which"
            + " may have forgotten its key: the app's next resume ends it UNCERTAIN again, unsent (under"
            + " ExpiredPendingAction.RESEND it resends it with that key, unprotected). Reconcile it, and if its effect"
            + " does not exist send it again as a new operation (a new key)";
        LOG.warn("{}", warning);
        err().println(IdemCli.PREFIX + "warning: " + TerminalText.safe(warning));
      } else {
        out().println("the app's next resume sends it with the same key if it runs before "
            + r.createdAt().plus(maxPendingAge) + " (maxPendingAge " + maxPendingAge + ")");
      }
      return 0;
    } catch (IllegalStateException e) {
      err().println(IdemCli.errorLine(e));
      return 1;
    }
  }

  /** Whole hours, or minutes under two hours: enough for an operator to weigh against the app's limit. */
  private static String age(Instant now, Instant createdAt) {
    Duration d = Duration.between(createdAt, now);
    if (d.isNegative()) {
      return "0 min";
    }
    return d.toHours() >= 2 ? d.toHours() + " h" : d.toMinutes() + " min";
  }
}
