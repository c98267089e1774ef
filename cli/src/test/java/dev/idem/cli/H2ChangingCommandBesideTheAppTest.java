package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/cli.md: "The commands that change a store ({@code redrive}, {@code purge --yes}) open it as
 * its owner does, and refuse while the app has it open", because "their open settles what a dead
 * process left in flight and would otherwise take back a running app's claims". That check exists
 * for {@code --jdbc-url jdbc:sqlite:} only ({@code JournalOptions#exclusive}); an app's own H2
 * database ({@code --jdbc-url jdbc:h2:...}, which the CLI accepts) gets no check, and its open is
 * single-process ({@code StoreOpener.Opened#singleProcess} is true for H2), so the CLI's
 * {@code CrashRecovery} takes the live app's IN_FLIGHT claim for a dead process's: back to PENDING,
 * due now, with an AMBIGUOUS attempt, while the app is still sending it. The app's next resume (or
 * another instance's) then sends it a second time while the first attempt is on the wire.
 *
 * <p>Here the app and the CLI share one JVM, so both reach the same H2 database through the same
 * file URL; across processes the same happens with H2's {@code AUTO_SERVER=TRUE} or a TCP server,
 * the ways several processes open one H2 database.
 *
 * <p>Found by a review on 2026-12-04.
 */
class H2ChangingCommandBesideTheAppTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  @TempDir
  Path dir;

  @Test
  void redriveRefusesWhileTheAppHasItsH2JournalOpenAndLeavesItsClaimAlone() throws Exception {
    String url = "jdbc:h2:file:" + dir.resolve("app");
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL(url);
    try (JdbcJournal app = JdbcJournal.dataSource(ds).closeOnShutdown(false).open()) {
      fail(app, "k-failed");
      begin(app, "k-sending");
      app.claim(id("k-sending"), "app-instance", Instant.now(), Duration.ofMinutes(5)).orElseThrow(); // on the wire
      app.flush();

      CliRun redrive = CliRun.of("journal", "redrive", "--jdbc-url", url, "--scope", "t", "--operation",
          "create-order", "--key", "k-failed");

      OperationRecord sending = app.find(id("k-sending")).orElseThrow();
      assertAll(
          () -> assertEquals(OperationState.IN_FLIGHT, sending.state(),
              "the running app's claim was taken back by the CLI's recovery: " + sending.state() + ", attempts "
                  + sending.attempts() + "; CLI said: " + redrive.out() + redrive.err()),
          () -> assertEquals(1, redrive.code(), "redrive ran beside the live app: " + redrive.out()),
          () -> assertTrue(redrive.err().contains("open in another process"), redrive.err()));
    }
  }

  @Test
  void purgeYesLeavesTheRunningAppsClaimAlone() throws Exception {
    String url = "jdbc:h2:file:" + dir.resolve("app");
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL(url);
    try (JdbcJournal app = JdbcJournal.dataSource(ds).closeOnShutdown(false).open()) {
      begin(app, "k-sending");
      app.claim(id("k-sending"), "app-instance", Instant.now(), Duration.ofMinutes(5)).orElseThrow();
      app.flush();

      CliRun purge = CliRun.of("journal", "purge", "--jdbc-url", url, "--older-than", "P1D", "--yes");

      OperationRecord sending = app.find(id("k-sending")).orElseThrow();
      assertEquals(OperationState.IN_FLIGHT, sending.state(), "purge --yes (exit " + purge.code() + ", "
          + purge.out().strip() + ") took back the running app's claim: " + sending.attempts());
    }
  }

  /**
   * The refusal is of the running app only: with the app stopped, redrive and purge --yes work on
   * its H2 database as documented, and the database is free again when they end (the app reopens).
   */
  @Test
  void withTheAppStoppedRedriveAndPurgeWorkAndReleaseTheDatabase() throws Exception {
    String url = "jdbc:h2:file:" + dir.resolve("app");
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL(url);
    try (JdbcJournal app = JdbcJournal.dataSource(ds).closeOnShutdown(false).open()) {
      fail(app, "k-failed");
      fail(app, "k-old");
    }

    CliRun redrive = CliRun.of("journal", "redrive", "--jdbc-url", url, "--scope", "t", "--operation",
        "create-order", "--key", "k-failed");
    CliRun purge = CliRun.of("journal", "purge", "--jdbc-url", url, "--older-than", "P1D", "--yes");

    assertEquals(0, redrive.code(), redrive.err());
    assertEquals(0, purge.code(), purge.err());
    try (JdbcJournal app = JdbcJournal.dataSource(ds).closeOnShutdown(false).open()) {
      assertEquals(OperationState.PENDING, app.find(id("k-failed")).orElseThrow().state());
      assertTrue(app.find(id("k-old")).isEmpty(), "purge --yes deleted the FAILED operation of 2026-01-01");
    }
  }

  /** Holding the database alone takes H2's exclusive mode, which needs an admin: said, not "a database error". */
  @Test
  void aUserWithoutAdminRightsIsToldWhyAndNothingChanges() throws Exception {
    String url = "jdbc:h2:file:" + dir.resolve("app");
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL(url);
    try (JdbcJournal app = JdbcJournal.dataSource(ds).closeOnShutdown(false).open()) {
      fail(app, "k-failed");
    }
    try (var c = ds.getConnection(); var st = c.createStatement()) {
      st.execute("CREATE USER OPS PASSWORD 'ops'");
      st.execute("GRANT ALL ON SCHEMA PUBLIC TO OPS");
    }

    CliRun redrive = CliRun.of("journal", "redrive", "--jdbc-url", url + ";USER=OPS;PASSWORD=ops", "--scope", "t",
        "--operation", "create-order", "--key", "k-failed");

    assertEquals(1, redrive.code(), redrive.out() + redrive.err());
    assertTrue(redrive.err().contains("admin rights"), redrive.err());
    try (JdbcJournal app = JdbcJournal.dataSource(ds).closeOnShutdown(false).open()) {
      assertEquals(OperationState.FAILED, app.find(id("k-failed")).orElseThrow().state());
    }
  }

  private static OperationId id(String key) {
    return new OperationId("t", "create-order", IdempotencyKey.of(key));
  }

  private static void begin(JdbcJournal j, String key) throws Exception {
    RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
    j.begin(new NewOperation(id(key), null, Fingerprinter.defaults().fingerprint(snap), snap, T0));
  }

  private static void fail(JdbcJournal j, String key) throws Exception {
    begin(j, key);
    Lease lease = j.claim(id(key), "test", T0, Duration.ofMinutes(1)).orElseThrow();
    j.recordAttempt(id(key), lease, new AttemptRecord(1, lease.generation(), T0, T0.plusMillis(5),
        Classification.PERMANENT, 402, null, "HTTP 402", Duration.ZERO, "permanent: no retry"));
    j.transition(id(key), lease, Transition.finish(OperationState.FAILED, T0.plusMillis(5), null, "HTTP 402"));
  }
}
