package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FileLocks} refuses a second lock of a file this JVM holds without opening a descriptor of
 * it, by whatever name it is asked for: on Linux, closing any descriptor of the file would drop the
 * process's POSIX lock on it (the other-process half is proven with child JVMs in persistence,
 * webhooks and server). The descriptors are counted in {@code /proc/self/fd}.
 */
class FileLocksTest {
  private static final FileLocks.Refusal REFUSAL = inThisJvm -> new JournalException(
      inThisJvm ? "held in this JVM" : "held by another process", null);

  @TempDir
  Path tmp;

  @Test
  void aHeldFileIsRefusedByEveryNameWithoutOpeningADescriptorOfIt() throws Exception {
    assumeTrue(Files.isDirectory(Path.of("/proc/self/fd")), "Linux: descriptors are counted in /proc/self/fd");
    Path file = tmp.resolve("store.lock");
    Path hardLink = tmp.resolve("hard.lock");
    Path symbolicLink = tmp.resolve("symbolic.lock");
    Path linkedDirectory = tmp.resolve("linked-dir");
    try (FileLocks.Held held = FileLocks.lock(file, REFUSAL)) {
      Files.createLink(hardLink, file);
      Files.createSymbolicLink(symbolicLink, file);
      Files.createSymbolicLink(linkedDirectory, tmp);
      assertEquals(1, descriptorsOf(file));
      for (Path name : new Path[] {file, hardLink, symbolicLink, linkedDirectory.resolve("store.lock")}) {
        JournalException refused = assertThrows(JournalException.class, () -> FileLocks.lock(name, REFUSAL));
        assertEquals("held in this JVM", refused.getMessage(), name.toString());
        assertEquals(1, descriptorsOf(file), "a refused lock by " + name + " opened a descriptor of the file");
      }
    }
    assertEquals(0, descriptorsOf(file), "released, the file has no descriptor left");
  }

  @Test
  void aReleasedFileCanBeLockedAgainAndASecondReleaseChangesNothing() throws Exception {
    Path file = tmp.resolve("store.lock");
    FileLocks.Held first = FileLocks.lock(file, REFUSAL);
    first.close();
    try (FileLocks.Held second = FileLocks.lock(file, REFUSAL)) {
      first.close(); // a stale handle must not release the lock another open now holds
      JournalException refused = assertThrows(JournalException.class, () -> FileLocks.lock(file, REFUSAL));
      assertEquals("held in this JVM", refused.getMessage());
    }
    FileLocks.lock(file, REFUSAL).close();
  }

  @Test
  void aFileReplacedUnderItsNameIsAnotherFile() throws Exception {
    Path file = tmp.resolve("store.lock");
    try (FileLocks.Held held = FileLocks.lock(file, REFUSAL)) {
      Files.move(file, tmp.resolve("moved.lock"));
      // A new file under the old name is not the held one; the moved one, by its new name, is.
      FileLocks.lock(file, REFUSAL).close();
      JournalException refused = assertThrows(JournalException.class,
          () -> FileLocks.lock(tmp.resolve("moved.lock"), REFUSAL));
      assertEquals("held in this JVM", refused.getMessage());
    }
  }

  /**
   * A lock file removed while held (a temp-file cleaner): the holder can tell with a stat, and a
   * second lock in this JVM is still refused by the file it guards, before any lock file is created
   * or opened; released, the guard goes with the lock.
   */
  @Test
  void aRemovedLockFileIsSeenByItsHolderAndTheGuardedFileStillRefusesASecondLockInThisJvm() throws Exception {
    Path file = tmp.resolve("store.lock");
    Path database = Files.createFile(tmp.resolve("store.db"));
    Path hardLink = tmp.resolve("linked.db");
    FileLocks.Guard guard = new FileLocks.Guard(database, "store");
    try (FileLocks.Held held = FileLocks.lock(file, guard, REFUSAL)) {
      assertNull(held.file().change());
      Files.delete(file);
      assertEquals("it is gone", held.file().change());

      JournalException refused = assertThrows(JournalException.class, () -> FileLocks.lock(file, guard, REFUSAL));
      assertEquals("held in this JVM", refused.getMessage());
      assertFalse(Files.exists(file), "the refused lock created a lock file");
      Files.createLink(hardLink, database);
      JournalException byLink = assertThrows(JournalException.class,
          () -> FileLocks.lock(tmp.resolve("linked.lock"), new FileLocks.Guard(hardLink, "store"), REFUSAL));
      assertEquals("held in this JVM", byLink.getMessage());
      // Another kind of lock of the same file (another store in it) is not refused by this one.
      FileLocks.lock(tmp.resolve("other.lock"), new FileLocks.Guard(database, "other store"), REFUSAL).close();

      Files.writeString(file, "");
      assertEquals("another file is in its place", held.file().change());
    }
    FileLocks.lock(file, guard, REFUSAL).close();
  }

  /** A guarded file created after the lock was taken is guarded once {@link FileLocks.Held#guardNow()} runs. */
  @Test
  void aGuardedFileCreatedAfterTheLockIsGuardedFromGuardNowOn() throws Exception {
    Path file = tmp.resolve("store.lock");
    Path database = tmp.resolve("store.db");
    FileLocks.Guard guard = new FileLocks.Guard(database, "store");
    try (FileLocks.Held held = FileLocks.lock(file, guard, REFUSAL)) {
      Files.createFile(database);
      held.guardNow();
      Files.delete(file);
      assertThrows(JournalException.class, () -> FileLocks.lock(file, guard, REFUSAL));
    }
  }

  /**
   * A store left open while its directory was removed (a test's temp directory, a cleaner) must not
   * refuse a new database that got the removed one's inode: ext4 reuses inodes, and a fresh database
   * in a new temp directory was refused as "already open in this JVM" (a CI run of 969c176b). A
   * hard link made before the removal stands in for the reused inode: the same identity, with both
   * of the holder's paths gone.
   */
  @Test
  void aGuardedFileGoneFromItsPathWithItsLockFileNoLongerRefusesTheFileThatHasItsIdentity() throws Exception {
    Path reused = tmp.resolve("new.db");
    FileLocks.Guard newGuard = new FileLocks.Guard(reused, "store");
    try (FileLocks.Held held = lockedThenRemovedLeaving(reused)) {
      assertEquals("it is gone", held.file().change());

      try (FileLocks.Held next = FileLocks.lock(tmp.resolve("new.lock"), newGuard, REFUSAL)) {
        Files.delete(tmp.resolve("new.lock"));
        assertThrows(JournalException.class, () -> FileLocks.lock(tmp.resolve("again.lock"), newGuard, REFUSAL),
            "the new lock guards the new file, whatever becomes of its lock file");
        held.close();
        assertThrows(JournalException.class, () -> FileLocks.lock(tmp.resolve("again.lock"), newGuard, REFUSAL),
            "releasing the old lock released the new lock's guard");
      }
    }
    FileLocks.lock(tmp.resolve("again.lock"), newGuard, REFUSAL).close();
  }

  /** The same, for a database created after its lock was taken ({@link FileLocks.Held#guardNow()}). */
  @Test
  void aGuardedFileCreatedAfterTheLockTakesTheGuardFromALockWhoseFileLeftBothPaths() throws Exception {
    Path kept = tmp.resolve("kept.db");
    Path reused = tmp.resolve("new.db");
    FileLocks.Guard newGuard = new FileLocks.Guard(reused, "store");
    try (FileLocks.Held held = lockedThenRemovedLeaving(kept)) {
      try (FileLocks.Held next = FileLocks.lock(tmp.resolve("new.lock"), newGuard, REFUSAL)) {
        Files.move(kept, reused); // the database appears after the lock, with the old file's inode
        next.guardNow();
        Files.delete(tmp.resolve("new.lock"));
        assertThrows(JournalException.class, () -> FileLocks.lock(tmp.resolve("again.lock"), newGuard, REFUSAL),
            "the new lock did not take the guard of its database");
      }
    }
  }

  /**
   * A lock guarding a database, whose directory (lock file and database) was then removed while it
   * is held; {@code link} is left as a hard link to the removed database: its inode, as a new file
   * could get it.
   */
  private FileLocks.Held lockedThenRemovedLeaving(Path link) throws IOException {
    Path dir = Files.createDirectory(tmp.resolve("removed"));
    Path database = Files.createFile(dir.resolve("store.db"));
    Files.createLink(link, database);
    FileLocks.Held held = FileLocks.lock(dir.resolve("store.lock"), new FileLocks.Guard(database, "store"), REFUSAL);
    Files.delete(dir.resolve("store.lock"));
    Files.delete(database);
    Files.delete(dir);
    return held;
  }

  /** How many of this process's descriptors are open on {@code file}, by any name (device and inode). */
  private static long descriptorsOf(Path file) throws IOException {
    Object key = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.filter(fd -> {
        try {
          return key.equals(Files.readAttributes(fd, BasicFileAttributes.class).fileKey());
        } catch (IOException e) {
          return false; // closed meanwhile (the listing's own descriptor)
        }
      }).count();
    }
  }
}
