package dev.idem.storage;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * The single-owner lock of a store in a SQLite file: an OS lock ({@link FileChannel#tryLock()}) on
 * {@code <database file>.idem-<store>.lock} beside it, held from the open until the close. Every
 * writable open of a store takes it for its database file: an open through an app's SQLite
 * DataSource, and an embedded open ({@link EmbeddedFiles}, which also keeps its own {@code .lock}
 * file, the one earlier versions took). SQLite's own locks let any number of connections share the
 * file, but a store treats every in-flight lease it finds at open as a dead process's: a second one
 * opened beside a live one (another process, or another instance in this JVM, embedded or through a
 * DataSource) would take the live one's operations back and send them again. The lock file is named
 * after the store, so that the journal, the guard and the inbox may share one app file, one of each.
 */
final class SqliteFileLock implements AutoCloseable {
  private final Path file;
  private final FileLocks.Held held;

  private SqliteFileLock(Path file, FileLocks.Held held) {
    this.file = file;
    this.held = held;
  }

  /**
   * Takes the lock of {@code what} in the SQLite file {@code database}, beside its real path
   * ({@link RealFile}): every name of one file (a link, its target, a path through a linked
   * directory) locks the same lock file, whether the database exists yet or not.
   *
   * @param owner the class an app shares instead of opening the store twice, for messages
   * @throws JournalException if another process or another open in this JVM holds it, or the lock
   *     file cannot be created beside the database
   */
  static SqliteFileLock take(Path database, String what, String owner) throws JournalException {
    Path real;
    try {
      real = RealFile.of(database);
    } catch (IOException e) {
      throw new JournalException("cannot resolve the real path of the " + what + "'s database file " + database
          + " (to lock it): " + e, e);
    }
    return takeReal(real, what, owner);
  }

  private static SqliteFileLock takeReal(Path database, String what, String owner) throws JournalException {
    Path file = lockFileOf(database, what);
    FileLocks.Held held;
    try {
      // Guarding the database file itself: an open in this JVM is refused even after the lock file
      // was removed (and a new one could be locked).
      held = FileLocks.lock(file, new FileLocks.Guard(database, what), inThisJvm -> inThisJvm
          ? new JournalException("the " + what + " in " + database + " is already open in this JVM, embedded or"
              + " through a DataSource (that open holds " + file + "); share one " + owner + " instance (it is"
              + " thread-safe) instead of opening it twice", null)
          : new JournalException("the " + what + " in " + database + " is open in another process, embedded or"
              + " through a DataSource (that process holds " + file + "); a " + what + " in a SQLite file belongs to"
              + " one process at a time (use PostgreSQL to share one between processes)", null));
    } catch (JournalException e) {
      throw e;
    } catch (IOException e) {
      throw new JournalException("cannot create or lock the " + what + "'s lock file " + file + " beside " + database
          + ": " + e, e);
    }
    return new SqliteFileLock(file, held);
  }

  /** The lock file. */
  Path file() {
    return file;
  }

  /**
   * The lock file as it was locked. The store checks with it, on each commit round, that the
   * path still names that file: once it does not, another process can take the lock, and the store.
   */
  FileIdentity locked() {
    return held.file();
  }

  /**
   * Takes this lock again at the lock file's path, for a store whose lock file was removed or
   * replaced while it held it ({@link #locked()}): at its close, to tell whether another process
   * owns the store now. Without a guard, since this lock still guards the database file; through
   * {@link FileLocks}, so that no descriptor of a file this JVM holds is opened and closed (which
   * would drop its POSIX locks): the file at the path is opened only if this JVM holds no lock on it.
   *
   * @return the lock, held until its {@link #close()}; null if another process (or another open in
   *     this JVM) holds the lock file now at the path
   * @throws IOException if the lock file cannot be created or opened
   */
  SqliteFileLock takeAgain() throws IOException {
    try {
      return new SqliteFileLock(file, FileLocks.lock(file, null, inThisJvm -> new JournalException("held", null)));
    } catch (JournalException held) {
      return null;
    }
  }

  /**
   * Guards the database file from now on, for one created after the lock was taken: a second open
   * in this JVM is then refused by the database file's identity, whatever became of the lock file.
   */
  void guardDatabase() throws IOException {
    held.guardNow();
  }

  static Path lockFileOf(Path database, String what) {
    return database.resolveSibling(database.getFileName() + ".idem-" + what.replace(' ', '-') + ".lock");
  }

  /** Releases the lock ({@link FileLocks.Held#close()}); the file stays, as the embedded store's does. */
  @Override
  public void close() {
    held.close();
  }
}
