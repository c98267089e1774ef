package dev.idem.cli;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.jdbc.JdbcJournal;
import java.util.Optional;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * A command on one operation, named by scope, operation name and key as {@code list} prints them:
 * it opens the journal, finds the operation (or tells the operator there is none, status 1), and
 * acts on it.
 */
abstract class OperationCommand extends CliCommand {
  @Mixin
  JournalOptions journal;

  @Option(names = "--scope", defaultValue = OperationId.DEFAULT_SCOPE, description = "Scope (default: ${DEFAULT-VALUE}).")
  String scope;

  @Option(names = "--operation", required = true, description = "Operation name.")
  String operation;

  @Option(names = "--key", required = true, description = "Idempotency key.")
  String key;

  /** Whether the command changes the journal, and so opens it as its owner does. */
  abstract boolean writes();

  /** Acts on the operation found; returns the exit status. */
  abstract int act(JdbcJournal j, OperationRecord r) throws Exception;

  @Override
  public final Integer call() throws Exception {
    OperationId id;
    try {
      id = new OperationId(scope, operation, IdempotencyKey.of(key));
    } catch (IllegalArgumentException e) {
      // Bad usage, not a store error: a script that retries on 1 would retry a typo (an unset
      // shell variable's empty key).
      throw usage("--scope, --operation and --key name no operation a journal can hold: " + e.getMessage());
    }
    try (JdbcJournal j = writes() ? journal.openForWriting() : journal.openReadOnly()) {
      Optional<OperationRecord> r = j.find(id);
      if (r.isEmpty()) {
        err().println(IdemCli.PREFIX + "no operation " + TerminalText.safe(id));
        return 1;
      }
      return act(j, r.get());
    }
  }
}
