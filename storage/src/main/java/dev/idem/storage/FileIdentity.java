package dev.idem.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;

/**
 * The database file an embedded store opened, and whether its path still leads to that file.
 *
 * <p>SQLite keeps writing a file that was unlinked, moved or replaced while it was open: a deploy
 * script or a temp-file cleaner that removes the store's directory leaves every commit landing in
 * files nobody will find again, and the next open at the path starts an empty store. SQLite says
 * nothing (it only declines to checkpoint such a file on close). So the store asks this, with one
 * {@code stat} of the path, before it acknowledges a commit round and at close.
 *
 * <p>The identity is the file system's file key (device and inode on POSIX systems): a file still
 * open cannot have its inode reused, so an equal key is the same file. Where the file system has
 * no file key (Windows, which does not let another process delete a file SQLite holds open
 * anyway), its creation time stands in: a new file at the path would not share it.
 *
 * <p>Immutable and thread-safe.
 *
 * @param path the database file, as the store opened it
 * @param fileKey its {@link BasicFileAttributes#fileKey()} at the open; null where there is none
 * @param created its creation time at the open (compared only where there is no file key)
 */
record FileIdentity(Path path, Object fileKey, FileTime created) {
  /** The identity of {@code path} now (just after the store's connection opened it). */
  static FileIdentity of(Path path) throws IOException {
    BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
    return new FileIdentity(path, a.fileKey(), a.creationTime());
  }

  /**
   * Null if {@link #path} still leads to the file that was opened; otherwise what became of it, in
   * words ("it is gone", "another file is in its place").
   */
  String change() {
    BasicFileAttributes now;
    try {
      now = Files.readAttributes(path, BasicFileAttributes.class);
    } catch (NoSuchFileException e) {
      return "it is gone";
    } catch (IOException e) {
      // Not readable is not proof of removal (a permission change, a flaky mount): but nothing
      // written now can be shown to be in the file the next open reads either.
      return "it can no longer be read (" + e + ")";
    }
    if (fileKey != null) {
      return fileKey.equals(now.fileKey()) ? null : "another file is in its place";
    }
    return created.equals(now.creationTime()) ? null : "another file is in its place";
  }
}
