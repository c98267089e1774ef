package dev.idem.cli;

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
 * The executor now refuses user info before a host with an underscore and journals URIs without
 * their fragment, but a journal written before that still holds both, and {@code journal show}
 * printed the URI whole. It names the request by scheme, host, port, path and query (the query is
 * part of the request's identity, and holds only what the app allowed), never user info or
 * fragment.
 */
class ShowOldUriCredentialsTest {
  @TempDir
  Path dir;

  @Test
  void showLeavesOutUserInfoAndFragmentThatAnOlderVersionJournaled() throws Exception {
    Path journal = dir.resolve("journal");
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      RequestSnapshot snap = RequestSnapshot.builder("POST",
          URI.create("http://svc:qzPLANTa@payments_api:8080/v1/orders?currency=EUR#access_token=qzPLANTb")).build();
      j.begin(new NewOperation(new OperationId("t", "create-order", IdempotencyKey.of("k-1")), null,
          Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
    }

    CliRun show = CliRun.of("journal", "show", "--dir", journal.toString(), "--scope", "t",
        "--operation", "create-order", "--key", "k-1");

    assertEquals(0, show.code(), show.err());
    assertTrue(show.out().contains("POST http://payments_api:8080/v1/orders?currency=EUR,"), show.out());
    assertFalse(show.out().contains("qzPLANT"), show.out());
  }

  @Test
  void showBlanksAPathParameterAndANestedUrlsCredentialKeepingTheNames() throws Exception {
    Path journal = dir.resolve("journal");
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      // Journaled as an executor before 57fdc7f9 did: a session id in the path, a Google key, and
      // a return URL carrying a token.
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/v1/cart;jsessionid=qzPLANTa"
          + "/orders?currency=EUR&KEY=qzPLANTb&next=https%3A%2F%2Fapp.example%2Fdone%3Faccess_token%3DqzPLANTc")).build();
      j.begin(new NewOperation(new OperationId("t", "create-order", IdempotencyKey.of("k-1")), null,
          Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
    }

    CliRun show = CliRun.of("journal", "show", "--dir", journal.toString(), "--scope", "t",
        "--operation", "create-order", "--key", "k-1");

    assertEquals(0, show.code(), show.err());
    assertTrue(show.out().contains(
        "POST https://api.example/v1/cart;jsessionid=redacted/orders?currency=EUR&KEY=redacted&next=redacted,"),
        show.out());
    assertFalse(show.out().contains("qzPLANT"), show.out());
  }
}
