package dev.idem.storage;

import java.nio.file.Path;

/**
 * Where an embedded store's files are, and how messages name it. The database file and SQLite's
 * {@code -wal} and {@code -shm} files beside it, and Idem's companion files named after
 * {@code companionBase}: {@code .lock} (the single-owner lock), {@code .id} (the store's id, also
 * kept in the database) and {@code .open} (present while a process has it open).
 *
 * @param directory where the files are (absolute, normalized)
 * @param databaseFile the SQLite database's file name
 * @param companionBase the base name of the lock, id and open-marker files
 * @param what the store in messages: "journal", "idempotency store", "webhook inbox"
 * @param owner the class an app shares instead of opening the store twice, for messages
 * @param ownsFiles true if the directory and the database belong to the store alone: the directory
 *     is created and kept owner-only, and nothing but the store opens the database, so that a
 *     {@code -wal} file missing after a crash means lost commits. False for the guard's file in the
 *     app's directory (which must exist, and is left as it is), whose database the app's own
 *     connections share in transactional mode: their last close checkpoints and removes the
 *     {@code -wal} file, legitimately
 */
public record Layout(Path directory, String databaseFile, String companionBase, String what, String owner,
    boolean ownsFiles) {

  /** The journal's layout: a directory of its own holding {@code idem-journal.db} and companions. */
  public static Layout journal(Path directory) {
    return new Layout(directory, EmbeddedFiles.DATABASE_FILE, EmbeddedFiles.BASE_NAME, "journal", "JdbcJournal", true);
  }

  /**
   * A database file that is not the store's alone: an app's SQLite file, or the guard's file in the
   * app's directory. Its directory must exist and is left as it is.
   *
   * @param file the SQLite database file
   * @param what the store in messages
   * @param owner the class an app shares instead of opening the store twice, for messages
   * @throws IllegalArgumentException if {@code file} is a root directory, which names no file
   */
  public static Layout file(Path file, String what, String owner) {
    Path db = file.toAbsolutePath().normalize();
    if (db.getFileName() == null) {
      throw new IllegalArgumentException(db + " is a directory; give the " + what + "'s database file");
    }
    String name = db.getFileName().toString();
    return new Layout(db.getParent(), name, name, what, owner, false);
  }

  /** The same layout for the directory's real path. */
  Layout in(Path realDirectory) {
    return new Layout(realDirectory, databaseFile, companionBase, what, owner, ownsFiles);
  }

  /** The SQLite database file. */
  public Path database() {
    return directory.resolve(databaseFile);
  }

  /** SQLite's write-ahead log; part of the database until SQLite checkpoints it. */
  public Path wal() {
    return directory.resolve(databaseFile + "-wal");
  }

  Path shm() {
    return directory.resolve(databaseFile + "-shm");
  }

  /** SQLite's rollback journal, for a database not in WAL mode (an app's own file). */
  Path rollbackJournal() {
    return directory.resolve(databaseFile + "-journal");
  }

  Path lock() {
    return directory.resolve(companionBase + ".lock");
  }

  Path id() {
    return directory.resolve(companionBase + ".id");
  }

  Path open() {
    return directory.resolve(companionBase + ".open");
  }

  /** What an Idem 0.1 journal directory held (H2), which this version no longer opens. */
  Path h2() {
    return directory.resolve(companionBase + ".mv.db");
  }
}
