package dev.idem.cli;

import dev.idem.core.OperationRecord;
import dev.idem.jdbc.JdbcJournal;
import picocli.CommandLine.Command;

/** Shows one operation with its attempt history. */
@Command(name = "show", description = "Show one operation and its attempts.")
final class ShowCommand extends OperationCommand {
  @Override
  boolean writes() {
    return false;
  }

  @Override
  int act(JdbcJournal j, OperationRecord r) {
    RecordPrinter.detail(out(), r);
    return 0;
  }
}
