package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.JdbcJournal;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/cli.md: "Exit status: 0 done, 1 an error with the store, 2 bad usage." A key that is not a
 * key (a typo'd space, an empty value from an unset shell variable) or a blank operation name is
 * the operator's typing, not the store's fault, yet show and redrive exit 1, as for a store that
 * cannot be opened, with no usage: a script that retries on 1 and stops on 2 retries a typo.
 */
class ReviewOperationUsageTest {
  @TempDir
  Path dir;

  @Test
  void anInvalidKeyOrBlankOperationIsBadUsage() throws Exception {
    Path journal = dir.resolve("journal");
    JdbcJournal.openEmbedded(journal).close();
    String d = journal.toString();

    CliRun key = CliRun.of("journal", "redrive", "--dir", d, "--operation", "charge-card", "--key", "");
    assertEquals(2, key.code(), "an empty --key exited " + key.code() + ": " + key.err());
    assertTrue(key.err().contains("--key"), "the error names the option: " + key.err());

    CliRun spaced = CliRun.of("journal", "show", "--dir", d, "--operation", "charge-card", "--key", "ord 7");
    assertEquals(2, spaced.code(), "--key 'ord 7' exited " + spaced.code() + ": " + spaced.err());

    CliRun op = CliRun.of("journal", "show", "--dir", d, "--operation", " ", "--key", "k-1");
    assertEquals(2, op.code(), "a blank --operation exited " + op.code() + ": " + op.err());
  }
}
