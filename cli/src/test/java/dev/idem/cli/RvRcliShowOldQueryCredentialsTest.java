package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code journal show} prints the journaled URI's query whole ({@code RecordPrinter.shown}: "the
 * query stays ... the executor journals only parameters the app allowed"). That holds for what
 * this version journals, not for a journal an earlier version wrote: until commit 57fdc7f9
 * ("Secrets: sig, key, ...") the executor's default rule did not know {@code ?key=} (a Google API
 * key) nor {@code ?sig=} (an Azure SAS signature), and journaled them with the request. {@code show}
 * prints them in clear on the operator's terminal (and in whatever log captures it). docs/cli.md
 * keeps header values and bodies out of the output because "they may carry secrets", and {@link
 * ShowOldUriCredentialsTest} already fixed the same case for user info and a fragment an older
 * version journaled (RecordPrinter: "a journal written by an older version may hold them"). A query
 * parameter the current default rule names secret ({@code RequestSnapshot
 * .isSecretQueryParameterByDefault}) should be shown by its name with its value blanked.
 */
class RvRcliShowOldQueryCredentialsTest {
  @TempDir
  Path dir;

  @Test
  void showBlanksTheSecretQueryParametersAnOlderVersionJournaled() throws Exception {
    Path journal = dir.resolve("journal");
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      // As an executor before 57fdc7f9 journaled these requests: the journal takes the URI as given.
      RequestSnapshot maps = RequestSnapshot.builder("POST",
          URI.create("https://maps.example.com/v1/orders?currency=EUR&key=AIzaQZPLANTa")).build();
      RequestSnapshot blob = RequestSnapshot.builder("PUT",
          URI.create("https://acct.blob.example.net/c/invoice-7.pdf?sv=2024-05-04&sp=w&sig=QZPLANTb%3D")).build();
      j.begin(new NewOperation(new OperationId("t", "create-order", IdempotencyKey.of("k-1")), null,
          Fingerprinter.defaults().fingerprint(maps), maps, Instant.parse("2026-01-01T00:00:00Z")));
      j.begin(new NewOperation(new OperationId("t", "upload-invoice", IdempotencyKey.of("k-2")), null,
          Fingerprinter.defaults().fingerprint(blob), blob, Instant.parse("2026-01-01T00:00:00Z")));
    }
    assertTrue(RequestSnapshot.isSecretQueryParameterByDefault("key")
        && RequestSnapshot.isSecretQueryParameterByDefault("sig"), "the executor's rule names both secret now");

    CliRun maps = CliRun.of("journal", "show", "--dir", journal.toString(), "--scope", "t",
        "--operation", "create-order", "--key", "k-1");
    CliRun blob = CliRun.of("journal", "show", "--dir", journal.toString(), "--scope", "t",
        "--operation", "upload-invoice", "--key", "k-2");

    assertEquals(0, maps.code(), maps.err());
    assertEquals(0, blob.code(), blob.err());
    assertAll(
        () -> assertFalse(maps.out().contains("QZPLANT"), "a Google API key printed in clear:\n" + maps.out()),
        () -> assertFalse(blob.out().contains("QZPLANT"), "an Azure SAS signature printed in clear:\n" + blob.out()),
        () -> assertTrue(maps.out().contains("https://maps.example.com/v1/orders?currency=EUR"), maps.out()));
  }
}
