/**
 * {@code idem}, the operators' command line (picocli) over the journal, the webhook inbox and the
 * server guard's records: {@link dev.idem.cli.IdemCli}. Only {@code IdemCli} is API; the commands
 * are its options and subcommands.
 */
package dev.idem.cli;
