package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.JournalException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.storage.EmbeddedFiles;
import dev.idem.jdbc.support.ChildJvm;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damage to the embedded journal's files, on a cleanly closed journal and on a killed one (its
 * commits still in the {@code -wal} file): bytes flipped, files truncated, zero-filled, deleted.
 * The answer must be a clear error at open, or the damaged operation quarantined; never a finished
 * operation sent again (due, or missing so that its key looks new), never a silently emptier
 * journal.
 */
class EmbeddedJournalCorruptionTest {
  private static final Instant FAR_FUTURE = Instant.parse("2200-01-01T00:00:00Z");
  @TempDir
  Path tmp;
  private Map<OperationId, OperationState> fixture;

  @BeforeEach
  void expectedFixture() throws Exception {
    fixture = FixtureChild.write(new InMemoryJournal());
  }

  private Path cleanJournal() throws Exception {
    Path dir = tmp.resolve("clean");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      FixtureChild.write(j);
    }
    assertTrue(Files.notExists(dir.resolve(EmbeddedFiles.WAL_FILE)), "a clean close leaves no -wal file");
    return dir;
  }

  private Path killedJournal() throws Exception {
    Path dir = tmp.resolve("killed");
    ChildJvm.Result child = ChildJvm.run(tmp, FixtureChild.class, dir.toString());
    assertEquals(HaltingJournal.HALT_CODE, child.exitCode(), child.output());
    assertTrue(Files.size(dir.resolve(EmbeddedFiles.WAL_FILE)) > 0, "the killed journal's commits are in its -wal");
    return dir;
  }

  @Test
  void undamagedJournalsOpenWithEveryOperation() throws Exception {
    assertIntactOrQuarantined(cleanJournal(), false);
    assertIntactOrQuarantined(killedJournal(), false);
  }

  @Test
  void aDeletedDatabaseIsNoticedNotReplacedByAnEmptyJournal() throws Exception {
    Path dir = cleanJournal();
    Files.delete(dir.resolve(EmbeddedFiles.DATABASE_FILE));
    assertOpenRefused(dir, "is missing");
    assertTrue(Files.notExists(dir.resolve(EmbeddedFiles.DATABASE_FILE)), "no empty journal was created");
  }

  @Test
  void aDatabaseTruncatedToNothingIsRefused() throws Exception {
    Path dir = cleanJournal();
    truncate(dir.resolve(EmbeddedFiles.DATABASE_FILE), 0);
    assertOpenRefused(dir, "empty or not a journal");
    assertEquals(0, Files.size(dir.resolve(EmbeddedFiles.DATABASE_FILE)), "the open wrote nothing into it");
  }

  @Test
  void aDatabaseTruncatedByHalfIsRefusedAsCorrupt() throws Exception {
    Path dir = cleanJournal();
    Path db = dir.resolve(EmbeddedFiles.DATABASE_FILE);
    truncate(db, Files.size(db) / 2);
    assertOpenRefused(dir, "corrupt");
  }

  @Test
  void aZeroFilledDatabaseIsRefusedAsCorrupt() throws Exception {
    Path dir = cleanJournal();
    Path db = dir.resolve(EmbeddedFiles.DATABASE_FILE);
    Files.write(db, new byte[(int) Files.size(db)]);
    assertOpenRefused(dir, "corrupt");
  }

  @Test
  void aChangedByteOfAStoredBodyIsQuarantinedNotSentUnderTheOriginalKey() throws Exception {
    Path dir = cleanJournal();
    String b64 = Base64.getEncoder().encodeToString(FixtureChild.PENDING_BODY.getBytes(StandardCharsets.UTF_8));
    Path db = dir.resolve(EmbeddedFiles.DATABASE_FILE);
    byte[] bytes = Files.readAllBytes(db);
    int at = indexOf(bytes, b64.substring(8, 40).getBytes(StandardCharsets.US_ASCII));
    assertTrue(at > 0, "the stored body is in the database file");
    bytes[at + 5] = (byte) (bytes[at + 5] == 'A' ? 'B' : 'A'); // still base64, still valid JSON: a different amount
    Files.write(db, bytes);

    OperationId pending = pendingId();
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      JournalException e = assertThrows(JournalException.class, () -> j.find(pending));
      assertTrue(e.getMessage().contains("quarantined") && e.getMessage().contains("checksum"), e.getMessage());
      assertTrue(j.findDue(FAR_FUTURE, null, 100).stream().noneMatch(r -> r.id().equals(pending)),
          "the changed request is never due");
      assertEquals(1, j.findQuarantined(10).size());
    }
  }

  /**
   * Issue 26: a stored response had no checksum, so one changed base64 character opened silently
   * and the journal returned the altered bytes as the server's answer.
   */
  @Test
  void aChangedByteOfAStoredResponseIsQuarantinedNotReturned() throws Exception {
    Path dir = cleanJournal();
    int victim = 5; // SUCCEEDED, with the response {"order":5}
    String b64 = Base64.getEncoder().encodeToString(("{\"order\":" + victim + "}").getBytes(StandardCharsets.UTF_8));
    Path db = dir.resolve(EmbeddedFiles.DATABASE_FILE);
    byte[] bytes = Files.readAllBytes(db);
    int at = indexOf(bytes, ("\"body\":\"" + b64).getBytes(StandardCharsets.US_ASCII));
    assertTrue(at > 0, "the stored response body is in the database file");
    int c = at + "\"body\":\"".length() + 2;
    bytes[c] = (byte) (bytes[c] == 'J' ? 'K' : 'J'); // still base64: a different answer
    Files.write(db, bytes);

    OperationId id = new ArrayList<>(fixture.keySet()).get(victim);
    assertEquals(OperationState.SUCCEEDED, fixture.get(id));
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      JournalException e = assertThrows(JournalException.class, () -> j.find(id));
      assertTrue(e.getMessage().contains("quarantined") && e.getMessage().contains("checksum"), e.getMessage());
      assertEquals(1, j.findQuarantined(10).size());
      assertEquals(fixture.size() - 1, fixture.keySet().stream().filter(k -> !k.equals(id)).map(k -> {
        try {
          return j.find(k).orElseThrow();
        } catch (Exception x) {
          throw new AssertionError(x);
        }
      }).count(), "every other operation reads as it was");
    }
  }

  @Test
  void flippedBytesAnywhereInTheDatabaseAreRefusedOrQuarantined() throws Exception {
    Path clean = cleanJournal();
    Path db = clean.resolve(EmbeddedFiles.DATABASE_FILE);
    long size = Files.size(db);
    Random random = new Random(77);
    int refused = 0;
    for (int trial = 0; trial < 40; trial++) {
      Path copy = copyOf(clean, "flip-" + trial);
      long at = trial < 8 ? trial * 13 : (long) (random.nextDouble() * size); // the header, then anywhere
      flip(copy.resolve(EmbeddedFiles.DATABASE_FILE), at, 1 + random.nextInt(255));
      refused += assertIntactOrQuarantined(copy, true) ? 1 : 0;
    }
    assertTrue(refused > 0, "some flips must hit the file's structure");
  }

  @Test
  void aKilledJournalWithoutItsWalIsRefused() throws Exception {
    Path dir = killedJournal();
    Files.delete(dir.resolve(EmbeddedFiles.WAL_FILE));
    assertOpenRefused(dir, "is missing");
  }

  @Test
  void aKilledJournalWithAZeroFilledWalIsRefused() throws Exception {
    Path dir = killedJournal();
    Path wal = dir.resolve(EmbeddedFiles.WAL_FILE);
    Files.write(wal, new byte[(int) Files.size(wal)]);
    assertOpenRefused(dir, "write-ahead log");
  }

  @Test
  void aKilledJournalWithADamagedEarlyWalFrameIsRefused() throws Exception {
    Path dir = killedJournal();
    Path wal = dir.resolve(EmbeddedFiles.WAL_FILE);
    // Inside the second frame's page (header 32 bytes, frame header 24, page 4096): a commit that
    // many later commits follow.
    flip(wal, 32 + (24 + 4096) + 24 + 100, 0x55);
    assertOpenRefused(dir, "write-ahead log");
  }

  /**
   * Issue 26: a zeroed frame, or one whose salt has a flipped bit, ended WalCheck's scan as if the
   * WAL's generation ended there, and SQLite then silently dropped every later commit. Every frame
   * before the last transaction is damaged in turn; each must be refused.
   */
  @Test
  void aZeroedOrSaltDamagedWalFrameBeforeTheLastTransactionIsRefused() throws Exception {
    Path killed = killedJournal();
    WalFrames frames = WalFrames.of(killed.resolve(EmbeddedFiles.WAL_FILE));
    int lastTxnStart = frames.lastTransactionStart();
    assertTrue(lastTxnStart > 4, "the fixture's WAL holds several transactions: " + frames);
    for (int i = 0; i < lastTxnStart; i++) {
      Path salted = copyOf(killed, "salt-" + i);
      flip(salted.resolve(EmbeddedFiles.WAL_FILE), frames.offset(i) + 8 + (i % 8), 1 << (i % 8));
      assertOpenRefused(salted, "write-ahead log");
      Path zeroed = copyOf(killed, "zero-" + i);
      zero(zeroed.resolve(EmbeddedFiles.WAL_FILE), frames.offset(i), frames.frameSize());
      assertOpenRefused(zeroed, "write-ahead log");
    }
  }

  /**
   * Issue 26: a -wal file cut at a frame boundary, or damaged in its last transaction only, looks
   * like a write a crash cut short; after a kill, the -shm index still says how many frames were
   * committed, so the loss of acknowledged commits is refused. Without the index it is not (the
   * documented limit), and the journal opens with what is intact.
   */
  @Test
  void aCutOrADamagedLastTransactionIsRefusedWhileTheShmIndexSaysWhatWasCommitted() throws Exception {
    Path killed = killedJournal();
    WalFrames frames = WalFrames.of(killed.resolve(EmbeddedFiles.WAL_FILE));
    int lastCommit = frames.commits().lastIndexOf(true);
    for (int i = 1; i <= lastCommit; i += Math.max(1, lastCommit / 12)) {
      Path cut = copyOf(killed, "cut-" + i);
      truncate(cut.resolve(EmbeddedFiles.WAL_FILE), frames.offset(i));
      assertOpenRefused(cut, "-shm index says");
    }
    for (int i = frames.lastTransactionStart(); i <= lastCommit; i++) {
      Path damaged = copyOf(killed, "last-" + i);
      flip(damaged.resolve(EmbeddedFiles.WAL_FILE), frames.offset(i) + 24 + 7, 0x21);
      assertOpenRefused(damaged, "-shm index says");
    }
    Path noIndex = copyOf(killed, "cut-without-index");
    truncate(noIndex.resolve(EmbeddedFiles.WAL_FILE), frames.offset(lastCommit));
    Files.delete(noIndex.resolve(EmbeddedFiles.DATABASE_FILE + "-shm"));
    JdbcJournal.openEmbedded(noIndex).close(); // the documented limit: indistinguishable from a crash
  }

  @Test
  void flippedBytesInAKilledJournalsDatabaseAreRefusedOrHarmless() throws Exception {
    Path killed = killedJournal();
    Path db = killed.resolve(EmbeddedFiles.DATABASE_FILE);
    long size = Files.size(db);
    Random random = new Random(78);
    for (int trial = 0; trial < 12; trial++) {
      Path copy = copyOf(killed, "kflip-" + trial);
      flip(copy.resolve(EmbeddedFiles.DATABASE_FILE), (long) (random.nextDouble() * size), 1 + random.nextInt(255));
      assertIntactOrQuarantined(copy, true);
    }
  }

  // ---- checks

  private OperationId pendingId() {
    return fixture.entrySet().stream().filter(e -> e.getValue() == OperationState.PENDING).findFirst().orElseThrow()
        .getKey();
  }

  private static void assertOpenRefused(Path dir, String says) {
    JournalException e = assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(dir).close());
    assertTrue(e.getMessage().contains(says), e.getMessage());
    assertTrue(e.getMessage().contains(dir.toString()), "the message names the file: " + e.getMessage());
    assertTrue(!e.getMessage().matches("(?s).*\\[SQLState [^\\]]*\\]\\s*$") || e.getMessage().length() > 80,
        "more than a bare SQLState: " + e.getMessage());
  }

  /**
   * Opens the journal: either the open is refused with a clear error (returns true), or every
   * fixture operation is there in its state or quarantined, and no finished one is due.
   */
  private boolean assertIntactOrQuarantined(Path dir, boolean mayBeRefused) throws Exception {
    JdbcJournal j;
    try {
      j = JdbcJournal.openEmbedded(dir);
    } catch (JournalException e) {
      if (!mayBeRefused) {
        throw e;
      }
      assertTrue(e.getMessage().contains(dir.toString()) && (e.getMessage().contains("corrupt")
          || e.getMessage().contains("not a journal")), "a clear refusal: " + e.getMessage());
      return true;
    }
    try (j) {
      List<String> problems = new ArrayList<>();
      for (Map.Entry<OperationId, OperationState> e : fixture.entrySet()) {
        Optional<OperationRecord> r;
        try {
          r = j.find(e.getKey());
        } catch (JournalException quarantined) {
          continue;
        }
        if (r.isEmpty()) {
          problems.add(e.getKey() + " is silently missing");
        } else if (r.get().state() != e.getValue()) {
          problems.add(e.getKey() + " is " + r.get().state() + ", was " + e.getValue());
        }
      }
      List<OperationRecord> due;
      try {
        due = j.findDue(FAR_FUTURE, null, 1000);
      } catch (JournalException e) {
        due = List.of(); // a damaged page met by the scan: refused, not sent
      }
      for (OperationRecord r : due) {
        if (fixture.getOrDefault(r.id(), OperationState.PENDING).isTerminal()) {
          problems.add(r.id() + " is due although it " + fixture.get(r.id()));
        }
      }
      if (!problems.isEmpty()) {
        fail(dir + ": " + problems);
      }
    }
    return false;
  }

  // ---- damage

  private static void truncate(Path file, long size) throws Exception {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.setLength(size);
    }
  }

  private static void flip(Path file, long at, int mask) throws Exception {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(at);
      int b = f.read();
      f.seek(at);
      f.write(b ^ mask);
    }
  }

  private static void zero(Path file, long at, int length) throws Exception {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.seek(at);
      f.write(new byte[length]);
    }
  }

  private Path copyOf(Path dir, String name) throws Exception {
    Path copy = Files.createDirectories(tmp.resolve(name));
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.toList()) {
        if (!f.getFileName().toString().endsWith(".lock")) {
          Files.copy(f, copy.resolve(f.getFileName()));
        }
      }
    }
    return copy;
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int k = 0; k < needle.length; k++) {
        if (haystack[i + k] != needle[k]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
