package dev.idem.storage;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;

/**
 * What a database file looked like when a reader opened it as immutable (SQLite's
 * {@code immutable=1}, for a journal with no {@code -wal} file: nothing is written, not even a
 * {@code -shm} file). SQLite then trusts the file not to change; if the app opens the journal
 * meanwhile and a checkpoint rewrites pages under the reader, what it read may be torn, and SQLite
 * may even call the file corrupt. So every read is followed by this check: a {@code -wal} file that
 * appeared, or a database file whose size, modification time or identity changed, discards the
 * read with a message that says to run it again (which then reads through the app's {@code -wal}).
 *
 * @param db the database file
 * @param wal its {@code -wal} file, absent at the open
 * @param fileKey the database file's identity at the open
 * @param size its size at the open
 * @param modified its modification time at the open
 */
record UnchangedFiles(Path db, Path wal, Object fileKey, long size, FileTime modified) {
  static UnchangedFiles of(String what, Path db, Path wal) throws JournalException {
    try {
      return read(db, wal);
    } catch (IOException e) {
      throw new JournalException("cannot read the " + what + " " + db + ": " + e, e);
    }
  }

  private static UnchangedFiles read(Path db, Path wal) throws IOException {
    BasicFileAttributes a = Files.readAttributes(db, BasicFileAttributes.class);
    return new UnchangedFiles(db, wal, a.fileKey(), a.size(), a.lastModifiedTime());
  }

  /** Null if nothing changed since the open, else what did. */
  String change() {
    if (Files.exists(wal)) {
      return "its " + wal.getFileName() + " file appeared: the app opened the journal";
    }
    try {
      return equals(read(db, wal)) ? null : "its database file changed: the app wrote to it";
    } catch (IOException e) {
      return "its database file can no longer be read (" + e.getClass().getSimpleName() + ")";
    }
  }
}
