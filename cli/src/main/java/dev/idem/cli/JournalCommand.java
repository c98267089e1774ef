package dev.idem.cli;

import picocli.CommandLine.Command;

/** The journal's commands: an embedded journal's directory, or a JDBC URL. */
@Command(name = "journal",
    description = "List, show, count, re-drive and purge the operations of an Idem journal.",
    subcommands = {ListCommand.class, ShowCommand.class, StatsCommand.class, RedriveCommand.class,
        PurgeCommand.class})
final class JournalCommand {
}
