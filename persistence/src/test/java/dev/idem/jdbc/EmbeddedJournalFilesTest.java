package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.core.spi.NewOperation;
import dev.idem.storage.EmbeddedFiles;
import dev.idem.jdbc.support.ChildJvm;
import dev.idem.jdbc.support.Ops;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The files of an embedded journal: permissions, locking against other processes, read-only media. */
class EmbeddedJournalFilesTest {
  @TempDir
  Path tmp;
  private final Ops ops = new Ops(7);

  @Test
  void journalFilesAreReadableByTheirOwnerOnly() throws Exception {
    Path dir = tmp.resolve("a/b/journal");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      j.begin(ops.newOp("{}"));
      assertOwnerOnly(dir);
    }
    assertOwnerOnly(dir);
  }

  @Test
  void anExistingDirectoryIsTightenedAndAnExistingFileKeepsItsData() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("open-dir"));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    NewOperation op = ops.newOp("{}");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      j.begin(op);
    }
    Files.setPosixFilePermissions(dir.resolve(EmbeddedFiles.DATABASE_FILE), PosixFilePermissions.fromString("rw-r--r--"));
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      assertEquals(op.request(), j.find(op.id()).orElseThrow().request());
      assertOwnerOnly(dir);
    }
  }

  private static void assertOwnerOnly(Path dir) throws IOException {
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> all = files.toList();
      assertTrue(all.contains(dir.resolve(EmbeddedFiles.DATABASE_FILE)), all.toString());
      for (Path f : all) {
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(f)), f.toString());
      }
    }
  }

  @Test
  void aSecondProcessGetsAClearErrorAndTheJournalStaysIntact() throws Exception {
    Path dir = tmp.resolve("journal");
    NewOperation op = ops.newOp("{\"n\":1}");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      j.begin(op);
      ChildJvm.Result other = ChildJvm.run(tmp, OpenJournalChild.class, dir.toString());

      assertEquals(0, other.exitCode(), other.output());
      assertTrue(other.output().contains("open in another process"), other.output());
      NewOperation second = ops.newOp("{\"n\":2}");
      j.begin(second);
      assertTrue(j.find(second.id()).isPresent());
    }
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      assertEquals(op.request(), j.find(op.id()).orElseThrow().request());
    }
  }

  /**
   * sqlite-jdbc unpacks its native library into a temporary directory on first use; where it
   * cannot (here: the directory it is told to use lies under a file, as unusable as a noexec
   * mount), the open says what to set, instead of "a database error".
   */
  @Test
  void aNativeLibraryThatCannotBeLoadedIsExplained() throws Exception {
    Path notADirectory = Files.writeString(tmp.resolve("not-a-directory"), "x");
    ChildJvm.Result child = ChildJvm.run(tmp, List.of("-Dorg.sqlite.tmpdir=" + notADirectory.resolve("sub")),
        OpenJournalChild.class, tmp.resolve("journal").toString());
    assertEquals(0, child.exitCode(), child.output());
    assertTrue(child.output().contains("native library") && child.output().contains("-Dorg.sqlite.tmpdir"),
        child.output());
  }

  @Test
  void aSecondOpenInTheSameJvmIsRefused() throws Exception {
    Path dir = tmp.resolve("journal");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir)) {
      JournalException e = assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(dir));
      assertTrue(e.getMessage().contains("already open in this JVM"), e.getMessage());
      j.begin(ops.newOp("{}"));
    }
    JdbcJournal.openEmbedded(dir).close(); // released on close
  }

  @Test
  void aReadOnlyDirectoryFailsFastOnOpen() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("ro"));
    try (ReadOnly ro = ReadOnly.make(dir)) {
      JournalException e = assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(dir.resolve("journal")));
      assertTrue(e.getMessage().contains("cannot create the journal"), e.getMessage());
    }
  }

  @Test
  void aReadOnlyJournalFileFailsFastOnOpen() throws Exception {
    Path dir = tmp.resolve("journal");
    JdbcJournal.openEmbedded(dir).close();
    try (ReadOnly ro = ReadOnly.make(dir.resolve(EmbeddedFiles.DATABASE_FILE))) {
      JournalException e = assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(dir));
      assertTrue(e.getMessage().contains("read-only"), e.getMessage());
    }
  }

  @Test
  void aFileInTheWayOfTheDirectoryIsAClearError() throws Exception {
    Path file = Files.writeString(tmp.resolve("not-a-dir"), "x");
    JournalException e = assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(file));
    assertTrue(e.getMessage().contains("not a directory"), e.getMessage());
  }

  /**
   * Makes a path read-only for this process: chmod when that binds (not root), else the immutable
   * attribute (root ignores modes). Aborts the test, loudly, if neither works here.
   */
  private record ReadOnly(Path path, boolean immutable) implements AutoCloseable {
    static ReadOnly make(Path path) throws Exception {
      boolean dir = Files.isDirectory(path);
      Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(dir ? "r-x------" : "r--------"));
      if (!Files.isWritable(path)) {
        return new ReadOnly(path, false);
      }
      Process p = new ProcessBuilder("chattr", "+i", path.toString()).redirectErrorStream(true).start();
      if (p.waitFor() == 0 && !Files.isWritable(path)) {
        return new ReadOnly(path, true);
      }
      System.err.println("!!!!! SKIPPED: cannot make " + path + " read-only here (root without chattr) !!!!!");
      Assumptions.abort("cannot make a path read-only on this machine");
      return null;
    }

    @Override
    public void close() throws Exception {
      if (immutable) {
        new ProcessBuilder("chattr", "-i", path.toString()).start().waitFor();
      }
      Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(Files.isDirectory(path) ? "rwx------"
          : "rw-------"));
    }
  }
}
