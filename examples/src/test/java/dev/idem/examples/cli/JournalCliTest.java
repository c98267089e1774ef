package dev.idem.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.Lease;
import dev.idem.core.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.RequestSnapshot;
import dev.idem.core.Fingerprinter;
import dev.idem.core.Transition;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalCliTest {
  @TempDir
  Path dir;

  private final OperationId failed = new OperationId("tenant-1", "charge-card", IdempotencyKey.of("key-failed-1"));
  private final OperationId pending = new OperationId("tenant-1", "create-order", IdempotencyKey.of("key-pending-1"));

  @BeforeEach
  void seed() throws Exception {
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir.resolve("journal"))) {
      Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
      // The secret header here simulates a careless writer: the CLI must still never print values.
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/charges"))
          .header("X-Api-Version", "7")
          .body("{\"amount\":1,\"card\":\"4111111111111111\"}".getBytes(StandardCharsets.UTF_8), "application/json")
          .build();
      j.begin(new NewOperation(failed, "cart-9", Fingerprinter.defaults().fingerprint(snap), snap, t0));
      Lease lease = j.claim(failed, "test", t0, Duration.ofMinutes(1)).orElseThrow();
      j.recordAttempt(failed, lease, new AttemptRecord(1, lease.generation(), t0, t0.plusMillis(5),
          Classification.PERMANENT, 402, null, "HTTP 402", Duration.ZERO, "permanent: no retry"));
      j.transition(failed, lease, Transition.finish(OperationState.FAILED, t0.plusMillis(5), null, "HTTP 402"));
      j.begin(new NewOperation(pending, null, Fingerprinter.defaults().fingerprint(snap), snap, t0));
    }
  }

  @Test
  void listsShowsRedrivesAndCounts() {
    String journal = dir.resolve("journal").toString();
    CliRun list = run("list", "--dir", journal, "--state", "FAILED");
    assertEquals(0, list.code());
    assertTrue(list.out().contains("key-failed-1") && list.out().contains("1 FAILED operation(s)"), list.out());
    assertFalse(list.out().contains("key-pending-1"));

    CliRun show = run("show", "--dir", journal, "--scope", "tenant-1", "--operation", "charge-card",
        "--key", "key-failed-1");
    assertEquals(0, show.code(), show.err());
    assertTrue(show.out().contains("HTTP 402") && show.out().contains("#1"), show.out());
    assertFalse(show.out().contains("4111111111111111"), "bodies are never printed");
    assertFalse(show.out().contains(": 7"), "header values are never printed");

    CliRun stats = run("stats", "--dir", journal);
    assertTrue(stats.out().contains("FAILED     1") && stats.out().contains("PENDING    1"), stats.out());

    CliRun redrive = run("redrive", "--dir", journal, "--scope", "tenant-1", "--operation", "charge-card",
        "--key", "key-failed-1");
    assertEquals(0, redrive.code(), redrive.err());
    CliRun after = run("stats", "--dir", journal);
    assertTrue(after.out().contains("FAILED     0") && after.out().contains("PENDING    2"), after.out());
  }

  @Test
  void redriveOfAPendingOperationIsRefusedClearly() {
    CliRun r = run("redrive", "--dir", dir.resolve("journal").toString(), "--scope", "tenant-1", "--operation",
        "create-order", "--key", "key-pending-1");
    assertEquals(1, r.code());
    assertTrue(r.err().contains("only FAILED or UNCERTAIN"), r.err());
  }

  @Test
  void purgeRemovesOnlyOldFinishedOperations() throws Exception {
    CliRun r = run("purge", "--dir", dir.resolve("journal").toString(), "--older-than", "P1D");
    assertEquals(0, r.code(), r.err());
    assertTrue(r.out().contains("purged 1"), r.out());
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir.resolve("journal"))) {
      assertTrue(j.find(failed).isEmpty());
      assertTrue(j.find(pending).isPresent(), "pending operations are never purged");
    }
  }

  @Test
  void aMissingJournalIsAClearErrorAndIsNotCreated() {
    Path missing = dir.resolve("nope");
    CliRun r = run("stats", "--dir", missing.toString());
    assertEquals(1, r.code());
    assertTrue(r.err().contains("no journal at") && r.err().contains("does not exist"), r.err());
    assertFalse(missing.toFile().exists());
  }

  @Test
  void aJournalInUseCanBeReadButNotChanged() throws Exception {
    Path journal = dir.resolve("journal");
    try (JdbcJournal holder = JdbcJournal.openEmbedded(journal)) {
      CliRun stats = run("stats", "--dir", journal.toString());
      assertEquals(0, stats.code(), stats.err());
      assertTrue(stats.out().contains("FAILED"), stats.out());
      CliRun purge = run("purge", "--dir", journal.toString(), "--older-than", "P1D");
      assertEquals(1, purge.code());
      assertTrue(purge.err().startsWith("idem-journal: ") && purge.err().contains("already open"), purge.err());
      assertTrue(holder.find(failed).isPresent(), "the holder's journal is intact");
    }
  }

  @Test
  void readingCommandsNeverWriteAByteOfTheJournal() throws Exception {
    Path journal = dir.resolve("journal");
    Map<String, String> before = digests(journal);
    assertEquals(0, run("stats", "--dir", journal.toString()).code());
    assertEquals(0, run("list", "--dir", journal.toString(), "--state", "FAILED").code());
    assertEquals(before, digests(journal));
  }

  @Test
  void anIdem01H2JournalIsExplainedNotOpened() throws Exception {
    Path old = java.nio.file.Files.createDirectories(dir.resolve("old"));
    java.nio.file.Files.writeString(old.resolve("idem-journal.mv.db"), "H2 file");
    CliRun r = run("stats", "--dir", old.toString());
    assertEquals(1, r.code());
    assertTrue(r.err().contains("H2 journal of Idem 0.1"), r.err());
  }

  /** Every file of a directory and the SHA-256 of its bytes. */
  private static Map<String, String> digests(Path d) throws Exception {
    Map<String, String> result = new java.util.TreeMap<>();
    try (var files = java.nio.file.Files.list(d)) {
      for (Path f : files.toList()) {
        byte[] sha = java.security.MessageDigest.getInstance("SHA-256").digest(java.nio.file.Files.readAllBytes(f));
        result.put(f.getFileName().toString(), java.util.HexFormat.of().formatHex(sha));
      }
    }
    return result;
  }

  @Test
  void worksOnAJdbcUrlToo() {
    String url = "jdbc:sqlite:" + dir.resolve("journal").resolve("idem-journal.db");
    CliRun r = run("list", "--jdbc-url", url, "--state", "FAILED");
    assertEquals(0, r.code(), r.err());
    assertTrue(r.out().contains("key-failed-1"), r.out());
  }

  @Test
  void badUsageExitsWithTwo() {
    assertEquals(2, run("list", "--dir", dir.toString(), "--state", "NOT_A_STATE").code());
  }

  private static CliRun run(String... args) {
    return CliRun.of(args);
  }

}
