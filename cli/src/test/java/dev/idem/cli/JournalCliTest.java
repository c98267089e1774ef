package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.Transition;
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
  void redrivePastTheAgeLimitAfterAnAttemptThatReachedTheServerWarnsNamingTheOperation() throws Exception {
    // key-failed-1 got a 402 (it reached the server) on 2026-01-01, long past an 18 h age limit.
    CliRun past = run("redrive", "--dir", dir.resolve("journal").toString(), "--scope", "tenant-1", "--operation",
        "charge-card", "--key", "key-failed-1", "--max-pending-age", "PT18H");
    assertEquals(0, past.code(), past.err());
    assertTrue(past.err().contains("warning") && past.err().contains("key-failed-1")
        && past.err().contains("UNCERTAIN again, unsent"), past.err());

    // Within the age limit (an ambiguous attempt just now): re-driven without a warning.
    OperationId recent = new OperationId("tenant-1", "charge-card", IdempotencyKey.of("key-recent-1"));
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir.resolve("journal"))) {
      Instant now = Instant.now();
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/charges")).build();
      j.begin(new NewOperation(recent, null, Fingerprinter.defaults().fingerprint(snap), snap, now));
      Lease lease = j.claim(recent, "test", now, Duration.ofMinutes(1)).orElseThrow();
      j.recordAttempt(recent, lease, new AttemptRecord(1, lease.generation(), now, now.plusMillis(5),
          Classification.AMBIGUOUS, null, "java.net.SocketTimeoutException", "read timeout", Duration.ZERO, "give up"));
      j.transition(recent, lease, Transition.finish(OperationState.UNCERTAIN, now.plusMillis(5), null, "timeout"));
    }
    CliRun within = run("redrive", "--dir", dir.resolve("journal").toString(), "--scope", "tenant-1", "--operation",
        "charge-card", "--key", "key-recent-1", "--max-pending-age", "PT18H");
    assertEquals(0, within.code(), within.err());
    assertFalse(within.err().contains("warning"), within.err());
    assertTrue(within.out().contains("sends it with the same key if it runs before"), within.out());
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
    CliRun r = run("purge", "--dir", dir.resolve("journal").toString(), "--older-than", "P1D", "--yes");
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
      CliRun purge = run("purge", "--dir", journal.toString(), "--older-than", "P1D", "--yes");
      assertEquals(1, purge.code());
      assertTrue(purge.err().startsWith(IdemCli.PREFIX) && purge.err().contains("already open"), purge.err());
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

  @Test
  void purgeWithoutYesOnlyShowsWhatItWouldDeleteAndWritesNothing() throws Exception {
    Path journal = dir.resolve("journal");
    Map<String, String> before = digests(journal);
    CliRun r = run("purge", "--dir", journal.toString(), "--older-than", "P1D");
    assertEquals(0, r.code(), r.err());
    assertTrue(r.out().contains("key-failed-1") && r.out().contains("would purge 1 ") && r.out().contains("--yes"), r.out());
    assertFalse(r.out().contains("key-pending-1"), "pending operations are never purge candidates");
    assertEquals(before, digests(journal), "a dry run writes no byte");
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      assertTrue(j.find(failed).isPresent(), "nothing was deleted");
    }
  }

  @Test
  void purgeRefusesAnAgeBeforeTheEpochAsBadUsage() {
    CliRun r = run("purge", "--dir", dir.resolve("journal").toString(), "--older-than", "P99999999D", "--yes");
    assertEquals(2, r.code());
    assertTrue(r.err().contains("reaches before 1970"), r.err());
    CliRun negative = run("purge", "--dir", dir.resolve("journal").toString(), "--older-than", "-P1D");
    assertEquals(2, negative.code());
    assertTrue(negative.err().contains("must not be negative"), negative.err());
  }

  @Test
  void aLimitBelowOneIsRefusedNotAnsweredWithZero() {
    for (String limit : new String[] {"-1", "0"}) {
      CliRun r = run("list", "--dir", dir.resolve("journal").toString(), "--limit", limit);
      assertEquals(2, r.code(), limit);
      assertTrue(r.err().contains("--limit must be at least 1, not " + limit), r.err());
      assertFalse(r.out().contains("operation(s)"), r.out());
    }
  }

  @Test
  void listWithoutStateListsEveryStateAndSaysWhenALimitCutsItShort() {
    String journal = dir.resolve("journal").toString();
    CliRun all = run("list", "--dir", journal);
    assertEquals(0, all.code(), all.err());
    assertTrue(all.out().contains("key-failed-1") && all.out().contains("key-pending-1"), all.out());
    assertTrue(all.out().contains("2 operation(s)"), all.out());

    CliRun one = run("list", "--dir", journal, "--limit", "1");
    assertEquals(0, one.code(), one.err());
    assertEquals(1, one.out().lines().filter(l -> l.contains("key-")).count(), one.out());
    assertTrue(one.out().contains("1 of 2 operation(s) shown; raise --limit"), one.out());
  }

  @Test
  void statesAreCaseInsensitive() {
    CliRun r = run("list", "--dir", dir.resolve("journal").toString(), "--state", "failed");
    assertEquals(0, r.code(), r.err());
    assertTrue(r.out().contains("key-failed-1") && r.out().contains("1 FAILED operation(s)"), r.out());
    assertEquals(0, run("list", "--dir", dir.resolve("journal").toString(), "--state", "In_Flight").code());
  }

  @Test
  void aFileGivenForADirectoryIsNamedAsAFile() throws Exception {
    Path file = java.nio.file.Files.writeString(dir.resolve("not-a-dir"), "x");
    for (String command : new String[] {"stats", "list"}) {
      CliRun r = run(command, "--dir", file.toString());
      assertEquals(1, r.code());
      assertTrue(r.err().contains("is a file; give the journal's directory"), r.err());
    }
    CliRun purge = run("purge", "--dir", file.toString(), "--older-than", "P1D", "--yes");
    assertTrue(purge.err().contains("is a file"), purge.err());
  }

  @Test
  void aDirectoryGivenForAJdbcFileIsNamedAsADirectory() {
    Path journal = dir.resolve("journal");
    CliRun r = run("stats", "--jdbc-url", "jdbc:sqlite:" + journal);
    assertEquals(1, r.code());
    assertTrue(r.err().contains("is a directory") && r.err().contains("--dir"), r.err());
  }

  @Test
  void anH2UrlToNoDatabaseIsRefusedAndNothingIsCreated() throws Exception {
    Path nothing = dir.resolve("nothing-here");
    CliRun r = run("stats", "--jdbc-url", "jdbc:h2:" + nothing);
    assertEquals(1, r.code());
    assertTrue(r.err().contains("no journal at") && r.err().contains("H2 database does not exist"), r.err());
    try (var files = java.nio.file.Files.list(dir)) {
      assertTrue(files.noneMatch(f -> f.getFileName().toString().startsWith("nothing-here")));
    }
  }

  @Test
  void everyErrorNamesTheProgramOnce() throws Exception {
    Path file = java.nio.file.Files.writeString(dir.resolve("f"), "x");
    String journal = dir.resolve("journal").toString();
    String[][] failing = {
        {"stats", "--dir", dir.resolve("nope").toString()},
        {"stats", "--dir", file.toString()},
        {"stats", "--jdbc-url", "jdbc:mysql://nowhere/x"},
        {"stats", "--jdbc-url", "jdbc:h2:" + dir.resolve("nothing")},
        {"show", "--dir", journal, "--operation", "x", "--key", "absent"},
        {"redrive", "--dir", journal, "--scope", "tenant-1", "--operation", "create-order", "--key", "key-pending-1"},
    };
    for (String[] args : failing) {
      CliRun r = run(args);
      assertEquals(1, r.code(), String.join(" ", args));
      assertTrue(r.err().startsWith(IdemCli.PREFIX), r.err());
      assertFalse(r.err().substring(IdemCli.PREFIX.length()).contains(IdemCli.PREFIX.trim()), r.err());
    }
    assertEquals("idem: boom", IdemCli.errorLine(new IllegalStateException("idem: boom")));
    assertEquals("idem: java.lang.IllegalStateException", IdemCli.errorLine(new IllegalStateException()));
  }

  /** {@code idem journal ARGS}. */
  private static CliRun run(String... args) {
    String[] command = new String[args.length + 1];
    command[0] = "journal";
    System.arraycopy(args, 0, command, 1, args.length);
    return CliRun.of(command);
  }

}
