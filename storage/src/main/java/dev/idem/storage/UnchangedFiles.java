package dev.idem.storage;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Objects;

/**
 * What a database file looked like when a reader opened it as immutable (SQLite's
 * {@code immutable=1}, for a journal with no {@code -wal} file: nothing is written, not even a
 * {@code -shm} file). SQLite then trusts the file not to change; if the app opens the journal
 * meanwhile and a checkpoint rewrites pages under the reader, what it read may be torn, and SQLite
 * may even call the file corrupt. So every read is followed by this check: a {@code -wal} file that
 * appeared, or a database file whose size, modification time or identity changed, discards the
 * read with a message that says to run it again (which then reads through the app's {@code -wal}).
 */
final class UnchangedFiles {
  private final Path db;
  private final Path wal;
  private final Object fileKey;
  private final long size;
  private final long modified;

  private UnchangedFiles(Path db, Path wal, BasicFileAttributes a) {
    this.db = db;
    this.wal = wal;
    this.fileKey = a.fileKey();
    this.size = a.size();
    this.modified = a.lastModifiedTime().toMillis() * 1_000_000L + a.lastModifiedTime().toInstant().getNano() % 1_000_000;
  }

  static UnchangedFiles of(String what, Path db, Path wal) throws JournalException {
    try {
      return read(db, wal);
    } catch (IOException e) {
      throw new JournalException("cannot read the " + what + " " + db + ": " + e, e);
    }
  }

  private static UnchangedFiles read(Path db, Path wal) throws IOException {
    return new UnchangedFiles(db, wal, Files.readAttributes(db, BasicFileAttributes.class));
  }

  /** Null if nothing changed since the open, else what did. */
  String change() {
    if (Files.exists(wal)) {
      return "its " + wal.getFileName() + " file appeared: the app opened the journal";
    }
    try {
      UnchangedFiles now = read(db, wal);
      if (!Objects.equals(fileKey, now.fileKey) || size != now.size || modified != now.modified) {
        return "its database file changed: the app wrote to it";
      }
      return null;
    } catch (IOException e) {
      return "its database file can no longer be read (" + e.getClass().getSimpleName() + ")";
    }
  }
}
