package dev.idem.cli;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.time.Instant;
import org.h2.jdbcx.JdbcDataSource;

/**
 * An app in a JVM of its own, with its journal in an H2 database (the URL in {@code args[0]}), one
 * operation PENDING: it prints {@code ready} and keeps the database open until its standard input
 * ends (the test closes it, or the test's JVM ends).
 */
public final class H2AppChild {
  private H2AppChild() {}

  public static void main(String[] args) throws Exception {
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL(args[0]);
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).open()) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
      journal.begin(new NewOperation(new OperationId("t", "create-order", IdempotencyKey.of("k-1")), null,
          Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
      journal.flush();
      System.out.println("ready");
      while (System.in.read() >= 0) {
        // holds the database until the parent closes our input
      }
    }
  }
}
