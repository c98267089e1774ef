package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.JournalException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.storage.EmbeddedFiles;
import dev.idem.jdbc.support.ChildJvm;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: the read-only open ({@link JdbcJournal#openReadOnly}, the CLI's list, show and stats)
 * called a journal corrupt that the app was opening, showed a count and a listing from two
 * different moments, rewrote {@code -shm} after a kill -9 although it promises not to write a
 * byte, and could not read a journal on a read-only file system.
 */
class ReadOnlyJournalTest {
  @TempDir
  Path tmp;

  @Test
  void aReadOfACleanJournalThatTheAppOpensMeanwhileIsDiscardedNotCalledCorrupt() throws Exception {
    Path dir = tmp.resolve("journal");
    Ops ops = new Ops(261);
    try (JdbcJournal app = JdbcJournal.openEmbedded(dir)) {
      for (int i = 0; i < 200; i++) {
        app.begin(ops.newOp("{\"n\":" + i + ",\"pad\":\"" + "a".repeat(500) + "\"}"));
      }
    }
    assertTrue(Files.notExists(dir.resolve(EmbeddedFiles.WAL_FILE)));
    try (JdbcJournal reader = JdbcJournal.openReadOnly(dir)) {
      assertEquals(200, reader.count(OperationState.PENDING));
      // The app opens the journal, writes, and its close checkpoints new pages into the database file
      // that the reader opened as immutable.
      try (JdbcJournal app = JdbcJournal.openEmbedded(dir)) {
        for (int i = 0; i < 300; i++) {
          app.begin(ops.newOp("{\"m\":" + i + ",\"pad\":\"" + "b".repeat(500) + "\"}"));
        }
        assertTrue(Files.exists(dir.resolve(EmbeddedFiles.WAL_FILE)));
        JournalException e = assertThrows(JournalException.class, () -> reader.count(OperationState.PENDING));
        assertReadAgain(e);
      }
      JournalException e = assertThrows(JournalException.class,
          () -> reader.findByState(OperationState.PENDING, null, 1000));
      assertReadAgain(e);
    }
    try (JdbcJournal reader = JdbcJournal.openReadOnly(dir)) {
      assertEquals(500, reader.count(OperationState.PENDING), "read again, it sees the app's commits");
    }
  }

  private static void assertReadAgain(JournalException e) {
    assertTrue(e.getMessage().contains("changed while it was read") && e.getMessage().contains("again"),
        e.getMessage());
    assertFalse(e.getMessage().contains("corrupt"), e.getMessage());
  }

  @Test
  void everyReadOfAnOpenReaderSeesOneSnapshotWhileTheAppWrites() throws Exception {
    Path dir = tmp.resolve("live");
    Ops ops = new Ops(262);
    try (JdbcJournal app = JdbcJournal.openEmbedded(dir)) {
      for (int i = 0; i < 30; i++) {
        app.begin(ops.newOp("{\"n\":" + i + "}"));
      }
      try (JdbcJournal reader = JdbcJournal.openReadOnly(dir)) {
        long counted = reader.count(OperationState.PENDING);
        assertEquals(30, counted);
        for (int i = 0; i < 20; i++) {
          app.begin(ops.newOp("{\"later\":" + i + "}"));
        }
        assertEquals(counted, reader.findByState(OperationState.PENDING, null, 1000).size(),
            "the listing is of the moment of the count");
        assertEquals(counted, reader.count(OperationState.PENDING));
      }
      try (JdbcJournal reader = JdbcJournal.openReadOnly(dir)) {
        assertEquals(50, reader.count(OperationState.PENDING), "a new reader sees the later commits");
      }
    }
  }

  @Test
  void readingAKilledJournalWritesNoByteOfItsFiles() throws Exception {
    Path dir = killedJournal();
    Map<String, String> before = fileStates(dir);
    assertTrue(before.containsKey(EmbeddedFiles.WAL_FILE) && before.containsKey(EmbeddedFiles.DATABASE_FILE + "-shm"),
        before.keySet().toString());
    Thread.sleep(20); // a rewrite now would show in the modification time too
    readFixture(dir);
    assertEquals(before, fileStates(dir), "the files, byte for byte and by modification time");
  }

  @Test
  void aJournalOnAReadOnlyFileSystemIsReadAndAWriterIsToldWhy() throws Exception {
    Path dir = killedJournal();
    List<Path> locked = makeReadOnly(dir);
    try {
      readFixture(dir);
      JournalException e = assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(dir).close());
      assertFalse(e.getMessage().contains("cannot create"), e.getMessage());
      assertTrue(e.getMessage().contains("read-only") && e.getMessage().contains("openReadOnly"), e.getMessage());
    } finally {
      undoReadOnly(locked);
    }
  }

  // ---- helpers

  private Path killedJournal() throws Exception {
    Path dir = tmp.resolve("killed");
    ChildJvm.Result child = ChildJvm.run(tmp, FixtureChild.class, dir.toString());
    assertEquals(HaltingJournal.HALT_CODE, child.exitCode(), child.output());
    return dir;
  }

  private static void readFixture(Path dir) throws Exception {
    Map<OperationId, OperationState> fixture = FixtureChild.write(new InMemoryJournal());
    try (JdbcJournal reader = JdbcJournal.openReadOnly(dir)) {
      for (Map.Entry<OperationId, OperationState> e : fixture.entrySet()) {
        assertEquals(e.getValue(), reader.find(e.getKey()).orElseThrow().state());
      }
      assertEquals(1, reader.findByState(OperationState.PENDING, null, 100).size());
    }
  }

  /** Each file's SHA-256 and modification time, by name (the lock file aside: the reader never opens it). */
  private static Map<String, String> fileStates(Path dir) throws Exception {
    Map<String, String> states = new TreeMap<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.toList()) {
        byte[] sha = java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f));
        states.put(f.getFileName().toString(), java.util.HexFormat.of().formatHex(sha) + " "
            + Files.getLastModifiedTime(f).toInstant());
      }
    }
    return states;
  }

  /**
   * Makes the directory and its files unwritable, as on a read-only mount. Permissions do not stop
   * root, so there the files are made immutable ({@code chattr +i}), which stops root too; where
   * neither works the test cannot run.
   */
  private static List<Path> makeReadOnly(Path dir) throws Exception {
    List<Path> all = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      all.addAll(files.toList());
    }
    all.add(dir);
    for (Path p : all) {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "r-x------" : "r--------"));
    }
    if (Files.isWritable(dir)) {
      List<String> command = new ArrayList<>(List.of("chattr", "+i"));
      all.forEach(p -> command.add(p.toString()));
      int exit;
      try {
        exit = new ProcessBuilder(command).redirectErrorStream(true).start().waitFor();
      } catch (java.io.IOException e) {
        exit = -1;
      }
      if (exit != 0) {
        undoReadOnly(all);
        Assumptions.abort("cannot make a directory read-only here (root, and no chattr)");
      }
    }
    return all;
  }

  private static void undoReadOnly(List<Path> all) throws Exception {
    List<String> command = new ArrayList<>(List.of("chattr", "-i"));
    all.forEach(p -> command.add(p.toString()));
    try {
      new ProcessBuilder(command).redirectErrorStream(true).start().waitFor();
    } catch (java.io.IOException ignored) {
      // no chattr: permissions alone were enough
    }
    for (Path p : all) {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(Files.isDirectory(p) ? "rwx------" : "rw-------"));
    }
  }
}
