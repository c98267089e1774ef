package dev.idem.cli;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Journal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import java.io.PrintWriter;
import java.util.Optional;
import picocli.CommandLine.Option;

/** Names one operation by scope, operation name and key, as {@code list} prints them. */
final class OperationSelector {
  @Option(names = "--scope", defaultValue = OperationId.DEFAULT_SCOPE, description = "Scope (default: ${DEFAULT-VALUE}).")
  String scope;

  @Option(names = "--operation", required = true, description = "Operation name.")
  String operation;

  @Option(names = "--key", required = true, description = "Idempotency key.")
  String key;

  OperationId id() {
    return new OperationId(scope, operation, IdempotencyKey.of(key));
  }

  /** The selected operation, or empty after telling the operator on {@code err} that there is none. */
  Optional<OperationRecord> find(Journal journal, PrintWriter err) throws IdempotencyException {
    Optional<OperationRecord> r = journal.find(id());
    if (r.isEmpty()) {
      err.println(IdemCli.PREFIX + "no operation " + id());
    }
    return r;
  }
}
