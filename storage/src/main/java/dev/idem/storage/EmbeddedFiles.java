package dev.idem.storage;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files of an embedded SQLite journal, all in one directory readable by its owner only
 * ({@code rwx------}):
 * <ul>
 *   <li>{@code idem-journal.db}, and SQLite's {@code -wal} and {@code -shm} files beside it
 *       ({@code rw-------}). The database file is created empty with those permissions before
 *       SQLite opens it; SQLite gives its {@code -wal} and {@code -shm} files the database file's
 *       permissions, so none of them is ever readable by others, not even briefly.</li>
 *   <li>{@code idem-journal.lock}: locked ({@link FileLocks}) by the one process that
 *       has the journal open. SQLite's own locks let several processes share a database; a journal
 *       must not be shared, because an embedded journal treats every in-flight lease it finds at
 *       open as a dead process's.</li>
 *   <li>{@code idem-journal.db.idem-journal.lock}: the lock an open through an app's SQLite
 *       DataSource takes on the same database file ({@link SqliteFileLock}), locked too, so that
 *       a journal opened on {@code idem-journal.db} through a DataSource is refused while the
 *       embedded one is open, and the embedded one while the other is. The directory's lock alone
 *       kept out only other embedded opens, and each open's crash recovery would have reset the
 *       other's in-flight operations for a resend.</li>
 *   <li>{@code idem-journal.id}: the journal's id, also stored in the database. A directory with
 *       this file and no database (deleted), an empty database (truncated) or another journal's
 *       database (swapped) is refused with an explanation instead of being answered with a fresh,
 *       empty journal that would forget every pending operation.</li>
 *   <li>{@code idem-journal.open}: present while a process has the journal open and removed by a
 *       clean close. Finding it at open means the last process stopped without closing: a crash. A
 *       clean close rewrites it before SQLite's last close removes the {@code -wal} file
 *       ({@link #markCheckpointedAtClose}), so that a close cut there is not taken for a lost
 *       {@code -wal} file.</li>
 * </ul>
 */
public final class EmbeddedFiles implements AutoCloseable {
  /** The base name of the journal's files. */
  public static final String BASE_NAME = "idem-journal";
  /** The SQLite database. */
  public static final String DATABASE_FILE = BASE_NAME + ".db";
  /** SQLite's write-ahead log; part of the database until SQLite checkpoints it. */
  public static final String WAL_FILE = DATABASE_FILE + "-wal";
  /** The open marker's content after a failed close that left no {@code -wal} file. */
  private static final String WAL_CHECKPOINTED = "closed after a failure; -wal checkpointed";
  /**
   * The open marker's content while a clean close finishes: every commit is in the database file,
   * and SQLite's last close may remove the {@code -wal} file ({@link #markCheckpointedAtClose}).
   */
  private static final String CLOSING_CHECKPOINTED = "closing; -wal checkpointed";

  static final Set<PosixFilePermission> DIRECTORY_PERMISSIONS = PosixFilePermissions.fromString("rwx------");
  static final Set<PosixFilePermission> FILE_PERMISSIONS = PosixFilePermissions.fromString("rw-------");
  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedFiles.class);

  private final Layout layout;
  private final Path directory;
  private final FileLocks.Held lock;
  private final SqliteFileLock fileLock;
  private final boolean crashed;
  private final String expectedId;
  /** The id file {@link #expectedId} was read from: {@link Layout#id()}, or one left beside a link. */
  private final Path expectedIdFile;
  /** The id the id file is to hold once the database stores it ({@link #reconcileId}); null if none. */
  private String idForFile;
  /** The database file the store's connection opened ({@link #databaseOpened}); null before. */
  private volatile FileIdentity database;

  private EmbeddedFiles(Layout layout, FileLocks.Held lock, SqliteFileLock fileLock, boolean crashed,
      String expectedId, Path expectedIdFile) {
    this.layout = layout;
    this.directory = layout.directory();
    this.lock = lock;
    this.fileLock = fileLock;
    this.crashed = crashed;
    this.expectedId = expectedId;
    this.expectedIdFile = expectedIdFile;
  }

  /**
   * Creates the directory and the database file if they are missing, with owner-only permissions,
   * takes the process lock and the database file's lock ({@link SqliteFileLock}, the one an open
   * through an app's DataSource takes), and checks that the database is the one the directory's id
   * file names.
   *
   * @throws JournalException if the directory cannot be created or written, another open (in this
   *     JVM or another process, embedded or through a DataSource) holds the journal, or the database
   *     file is missing, empty or another journal's while the id file says a journal lived here
   */
  public static EmbeddedFiles prepare(Layout requested) throws JournalException {
    Path dir = requested.directory().toAbsolutePath().normalize();
    String what = requested.what();
    try {
      createDirectory(dir, requested);
      dir = dir.toRealPath();
      Layout linked = requested.in(dir);
      Layout layout = atRealFile(linked);
      if (Files.exists(layout.h2()) && !Files.exists(layout.database())) {
        throw new JournalException("the journal directory " + dir + " holds an H2 journal of Idem 0.1 ("
            + layout.h2().getFileName() + "), which this version no longer opens: H2 lost committed rows under"
            + " repeated kills. Finish or re-drive its operations with Idem 0.1 first, or move the directory aside to"
            + " start a new SQLite journal here", null);
      }
      FileLocks.Held lock = FileLocks.lock(layout.lock(), inThisJvm -> inThisJvm
          ? new JournalException("the " + what + " at " + layout.database() + " is already open in this JVM; share"
              + " one " + layout.owner() + " instance (it is thread-safe) instead of opening it twice", null)
          : new JournalException("the " + what + " at " + layout.database() + " is open in another process; an"
              + " embedded " + what + " belongs to one process (use PostgreSQL to share one between processes)", null));
      SqliteFileLock fileLock = null;
      try {
        tighten(layout.lock());
        // Taken after the directory's lock, so that two embedded opens still get the message above.
        // The database's real path (atRealFile), the one an open through a DataSource locks too.
        fileLock = SqliteFileLock.take(layout.database(), what, layout.owner());
        tighten(fileLock.file());
        return checked(layout, linked, lock, fileLock);
      } catch (IOException | RuntimeException e) {
        if (fileLock != null) {
          fileLock.close();
        }
        lock.close(); // releases the lock this open took
        throw e;
      }
    } catch (JournalException e) {
      throw e;
    } catch (FileAlreadyExistsException e) {
      throw new JournalException("cannot create the " + what + " directory " + dir + ": a file is in the way", e);
    } catch (AccessDeniedException e) {
      throw cannotWrite(requested.in(dir), "permission denied (read-only directory?)", e);
    } catch (FileSystemException e) {
      throw cannotWrite(requested.in(dir), e.getReason() == null ? e.getClass().getSimpleName() : e.getReason(), e);
    } catch (IOException e) {
      throw cannotWrite(requested.in(dir), e.getClass().getSimpleName(), e);
    }
  }

  /**
   * The layout of the file SQLite opens for {@code layout}'s database, which follows symbolic links
   * (existing or not yet created: {@link RealFile}). A store in an app's file moves, with every
   * companion file, to the link's target, so that an open by either name finds the same lock, id
   * and open marker, and syncs and checks the {@code -wal} file SQLite writes, beside the target. A
   * store that owns its directory cannot move its companions out of it, and SQLite's {@code -wal}
   * and {@code -shm} files would be outside it, where the store neither syncs nor checks them: a
   * database file there that links elsewhere is refused.
   *
   * @param layout a layout whose directory exists
   * @throws JournalException for a linked database file in a store's own directory, or a link to a
   *     directory that does not exist
   */
  static Layout atRealFile(Layout layout) throws IOException, JournalException {
    Path db = layout.database();
    Path real = RealFile.of(db);
    if (real.equals(layout.directory().toRealPath().resolve(layout.databaseFile()))) {
      return layout; // not a link: as given (a read-only open names the directory as it was given)
    }
    String what = layout.what();
    if (layout.ownsFiles()) {
      throw new JournalException("the " + what + "'s database file " + db + " is a symbolic link to " + real
          + ": SQLite would keep its -wal and -shm files beside " + real.getFileName() + ", outside " + layout.directory()
          + ", where the " + what + " neither syncs nor checks them, so its commits would not be durable. Link the"
          + " whole directory instead, or, while the " + what + " is closed, move " + real + " to " + db
          + " (in place of the link) and its -wal file, if any, " + real.getFileName() + "-wal, to " + layout.wal()
          + ": SQLite reads the -wal file named after the database file, and one left under the old name is"
          + " ignored with the commits it holds", null);
    }
    if (!Files.isDirectory(real.getParent())) {
      throw new JournalException("cannot open the " + what + " " + db + ": it is a symbolic link to " + real
          + ", whose directory does not exist", null);
    }
    return Layout.file(real, what, layout.owner());
  }

  /**
   * A directory that cannot be written: "cannot create" only if there is no store yet; an existing
   * one (on a read-only mount, say) is named as such, with what can still read it.
   */
  private static JournalException cannotWrite(Layout layout, String reason, Exception cause) {
    Path dir = layout.directory();
    if (Files.exists(layout.database())) {
      return new JournalException("the " + layout.what() + " in " + dir + " cannot be opened for writing: " + reason
          + " (a read-only file system or directory?). The " + layout.what() + " needs to write before it answers;"
          + " to read it as it is, use " + layout.owner() + ".openReadOnly (the CLI's list, show and stats)", cause);
    }
    return new JournalException("cannot create the " + layout.what() + " in " + dir + ": " + reason, cause);
  }

  /**
   * @param linked the layout as given, before {@link #atRealFile} moved it beside a link's target:
   *     where a version before that move kept the id file of a store opened through the link
   */
  private static EmbeddedFiles checked(Layout layout, Layout linked, FileLocks.Held lock, SqliteFileLock fileLock)
      throws IOException, JournalException {
    Path dir = layout.directory();
    String what = layout.what();
    String walFile = layout.wal().getFileName().toString();
    Path db = layout.database();
    Path idFile = idFileOf(layout, linked);
    String id = Files.exists(idFile) ? Files.readString(idFile, StandardCharsets.US_ASCII).strip() : null;
    boolean dbExists = Files.exists(db);
    if (id != null && !dbExists) {
      throw new JournalException("the " + what + " database " + db + " is missing, but " + idFile + " says " + what
          + " " + id + " lived here: it was deleted or moved. Restore it (with its " + walFile + " file, if any) from"
          + " a backup; or, to start an empty " + what + " and forget everything it held, delete " + idFile, null);
    }
    boolean crashed = Files.exists(layout.open());
    if (crashed && id != null && !Files.exists(layout.wal())
        && (layout.ownsFiles() || indexLeftBehind(layout))
        && !walCheckpointedAtClose(layout)) {
      // SQLite removes the -wal file only when the last connection closes cleanly. After a crash it
      // holds commits not yet copied into the database: without it the journal would silently be
      // older than what was acknowledged.
      throw new JournalException("the " + what + " at " + dir + " was not closed cleanly, and its " + walFile
          + " file, which holds its latest commits, is missing: writes acknowledged as durable may be lost."
          + " Restore the file from a backup; or, to open what is left, delete " + layout.open(), null);
    }
    Path wal = layout.wal();
    if (id != null && dbExists && Files.size(db) == 0 && (!Files.exists(wal) || Files.size(wal) == 0)) {
      // Refused before SQLite opens it: SQLite would write a new header into the empty file. (A
      // killed journal may have an empty database file while all its commits are in the -wal.)
      throw truncatedOrReplaced(layout, idFile, id);
    }
    if (!dbExists) {
      Files.createFile(db, ownerOnly(dir, FILE_PERMISSIONS));
      fileLock.guardDatabase(); // it did not exist when the lock was taken
    } else if (!Files.isWritable(db)) {
      throw new JournalException("the " + what + " file " + db + " is read-only; the " + what + " needs to write it"
          + " before anything is sent", null);
    } else if (Files.isDirectory(db)) {
      throw new JournalException("the " + what + " file " + db + " is a directory", null);
    }
    return new EmbeddedFiles(layout, lock, fileLock, crashed, id, idFile);
  }

  /**
   * Whether a store sharing its file with the app's connections (the guard's), crashed and without
   * a {@code -wal} file, finds SQLite's {@code -shm} index left beside it. Those connections may
   * legitimately have removed the {@code -wal} file after the crash: their last clean close does,
   * and removes the index with it, the index first (SQLite's sqlite3WalClose), so a clean close
   * never leaves an index beside no {@code -wal} file. One left (not empty: SQLite sizes it when it
   * maps it) means the {@code -wal} file went some other way. Known from the file's attributes
   * alone: reading the index would take a descriptor of the {@code -shm} file, and closing it would
   * drop the POSIX locks the app's connections in this JVM hold on it ({@link WalCheck}). The
   * {@code -wal} file is looked for again after the index: an app connection opening meanwhile
   * creates the {@code -wal} file before the index.
   */
  private static boolean indexLeftBehind(Layout layout) throws IOException {
    Path shm = layout.shm();
    try {
      return Files.isRegularFile(shm) && Files.size(shm) > 0 && !Files.exists(layout.wal());
    } catch (NoSuchFileException e) {
      return false; // removed meanwhile, by the clean close of an app's connection
    }
  }

  /**
   * The id file to check the database against: the layout's, or, for a store reached through a
   * link that has none beside the target yet, the one a version that kept the companion files beside
   * the link left there. Carried over (checked against the database, then written beside the target
   * by {@link #markOpen}) rather than ignored: ignored, the database's own id would be taken as it
   * is, and a database file swapped before the first open after the upgrade would be accepted, and
   * vouched for from then on. The file beside the link is left as it is, for a rollback.
   */
  private static Path idFileOf(Layout layout, Layout linked) {
    Path idFile = layout.id();
    if (linked.equals(layout) || Files.exists(idFile) || !Files.isRegularFile(linked.id())) {
      return idFile;
    }
    LOG.info("Idem {} {}: checking the database against {}, the id file kept beside the link by an earlier"
        + " version; it is carried over to {}", layout.what(), layout.database(), linked.id(), idFile);
    return linked.id();
  }

  /** For a database file that is empty or not the store's, where {@code idFile} says store {@code id} lived. */
  private static JournalException truncatedOrReplaced(Layout layout, Path idFile, String id) {
    String what = layout.what();
    return new JournalException("the " + what + " database " + layout.database() + " is empty or not a " + what
        + ", but " + idFile + " says " + what + " " + id + " lived here: the file was truncated or replaced."
        + " Restore it from a backup; or, to start an empty " + what + " and forget everything it held, delete "
        + idFile + " and " + layout.database(), null);
  }

  /** Where the files are, and how messages name the store. */
  public Layout layout() {
    return layout;
  }

  /** True if the last process that had the journal open stopped without closing it. */
  public boolean crashed() {
    return crashed;
  }

  /**
   * Checks the id stored in the database against the id file, and decides what {@link #markOpen}
   * writes where one is missing: a new id for a new store, or the database's id for a store whose
   * id file is missing (lost, or from before the id file existed), so that the check holds from
   * this open on.
   *
   * @param storedId the id in the database, or null if it has none
   * @return the id the database must store, if it has none yet; otherwise null
   * @throws JournalException if the two ids differ, or the id file names a journal and the
   *     database has no id (it was truncated or replaced by an empty one)
   */
  public String reconcileId(String storedId) throws JournalException {
    Path idFile = expectedIdFile;
    if (expectedId != null && storedId == null) {
      throw truncatedOrReplaced(layout, idFile, expectedId);
    }
    if (expectedId != null && !expectedId.equals(storedId)) {
      throw copiedIn(storedId);
    }
    String newId = storedId == null ? UUID.randomUUID().toString() : null;
    idForFile = newId != null ? newId : storedId;
    return newId;
  }

  /**
   * Refuses, before SQLite opens the database to write, a database file whose own pages (read
   * without its {@code -wal} file) hold another store's id. Refused after that open, its SQLite
   * close would be the last one and checkpoint this store's {@code -wal} file (after a crash, its
   * acknowledged commits) into the foreign file and remove it: lost with the right file put back.
   * An id only in the {@code -wal} file (a crashed new store) is not seen here; {@link #reconcileId}
   * checks it once SQLite has opened the file.
   *
   * @param idInFile the id the database file's pages hold, or null if none or unknown
   * @throws JournalException if it is another store's
   */
  void refuseForeign(String idInFile) throws JournalException {
    if (expectedId != null && idInFile != null && !expectedId.equals(idInFile)) {
      throw copiedIn(idInFile);
    }
  }

  /** Whether the id file names a store the database must be ({@link #refuseForeign}). */
  boolean expectsId() {
    return expectedId != null;
  }

  private JournalException copiedIn(String storedId) {
    String what = layout.what();
    return new JournalException("the " + what + " database " + layout.database() + " belongs to " + what + " "
        + storedId + ", not to " + what + " " + expectedId + " named by " + expectedIdFile + ": a database file from"
        + " elsewhere was copied in. Put the right file back, or move the files aside", null);
  }

  /**
   * Writes the id file if it is missing or the database was just given a new id (after the
   * database has stored it), and marks the journal open.
   *
   * @param idToWrite the new id the database now stores, or null ({@link #reconcileId}'s answer)
   */
  public void markOpen(String idToWrite) throws JournalException {
    try {
      if (idToWrite != null || !Files.exists(layout.id())) {
        String id = idToWrite != null ? idToWrite : idForFile;
        if (id != null) {
          writeDurably(layout.id(), id + "\n");
        }
      }
      writeDurably(layout.open(), "open\n");
      tightenAll();
    } catch (IOException e) {
      throw new JournalException("cannot write the " + layout.what() + "'s marker files in " + directory + ": " + e, e);
    }
  }

  /**
   * Records which file the store's connection opened at {@link Layout#database()}: call it once the
   * connection has opened it. The store checks, before it acknowledges a commit and at close, that
   * the path still leads to it ({@link FileIdentity}); the close's marks are not written beside a
   * file that is not it.
   *
   * @throws JournalException if the file cannot be read
   */
  FileIdentity databaseOpened() throws JournalException {
    try {
      database = FileIdentity.of(layout.database());
      return database;
    } catch (IOException e) {
      throw new JournalException("cannot read the " + layout.what() + " file " + layout.database() + ": " + e, e);
    }
  }

  /**
   * The lock file every writable open of this database takes ({@link SqliteFileLock}), as it was
   * locked: the store checks on each commit round that its path still names it.
   */
  FileIdentity lockFile() {
    return fileLock.locked();
  }

  /** Marks a clean close: the next open has nothing to recover. */
  public void markClosed() {
    try {
      Files.deleteIfExists(layout.open());
      syncDirectory();
    } catch (IOException e) {
      LOG.warn("Idem {} {}: cannot remove {} on close; the next open will treat the close as a crash ({})",
          layout.what(), directory, layout.open().getFileName(), e.toString());
    }
  }

  /**
   * Marks a close that was not clean (the journal had failed, say on a full disk) but after which
   * SQLite checkpointed every commit into the database and removed the {@code -wal} file: the next
   * open still recovers as after a crash, but must not ask for a {@code -wal} file that held
   * nothing. Without this mark it refused to open, asking for a backup of a file that was never
   * lost. With a {@code -wal} file left, the crash marker stays as it is.
   *
   * <p>A store whose lock file was removed or replaced while it was open takes the lock again at
   * the lock file's path first, and marks its close only while it holds it: then no other process
   * owns the store, and the marker is this process's. Held by another process, the marker may be
   * that process's, and is left alone.
   */
  public void markClosedAfterFailure() {
    FileIdentity opened = database;
    if (opened != null && opened.change() != null) {
      // The files were removed or replaced under the store (its close said so): whatever is at the
      // path now (nothing, a restored backup) is not what this process wrote, and gets no mark of it.
      return;
    }
    if (fileLock.locked().change() == null) {
      markCheckpointed();
      return;
    }
    // Its lock file was removed or replaced. Left unmarked, the crash marker would outlive the -wal
    // file SQLite's last close just removed, and the reopen the lock-lost error asks for would be
    // refused as if acknowledged commits were lost (a user would restore an old backup).
    SqliteFileLock again;
    try {
      again = fileLock.takeAgain();
    } catch (IOException e) {
      LOG.warn("Idem {} {}: cannot lock {} again after its lock file was removed, so {} is left as it is ({})",
          layout.what(), directory, fileLock.file(), layout.open().getFileName(), e.toString());
      return;
    }
    if (again == null) {
      // Another process owns the store now: the open marker may be that process's, which a mark of
      // this close would overwrite.
      LOG.warn("Idem {} {}: another process holds {} now; {} is left to it", layout.what(), directory,
          fileLock.file(), layout.open().getFileName());
      return;
    }
    try {
      tighten(again.file()); // created again by this close, as by an open
      markCheckpointed();
    } catch (IOException e) {
      LOG.warn("Idem {} {}: cannot set the permissions of {} ({})", layout.what(), directory, again.file(),
          e.toString());
      markCheckpointed();
    } finally {
      again.close();
    }
  }

  /**
   * After an open that failed once SQLite had opened the database and {@link #reconcileId} had
   * found it this store's, whose connection is closed now: marks it as
   * {@link #markClosedAfterFailure} marks a failed close (only if SQLite's last close left no
   * {@code -wal} file), if an open marker is there, this open's ({@link #markOpen}) or a crashed
   * process's. A store closed cleanly before the failed open has none, and gets none: the next open
   * does not recover it as after a crash. Not for a file not found to be this store's: the
   * {@code -wal} file SQLite's close checkpointed went into that file, and the marker must go on
   * saying that the store's own file lacks it.
   */
  void markFailedOpen() {
    if (Files.exists(layout.open())) {
      markClosedAfterFailure();
    }
  }

  /** Marks a failed close after which SQLite left no {@code -wal} file ({@link #markClosedAfterFailure}). */
  private void markCheckpointed() {
    if (Files.exists(layout.wal())) {
      return;
    }
    try {
      writeDurably(layout.open(), WAL_CHECKPOINTED + "\n");
    } catch (IOException e) {
      LOG.warn("Idem {} {}: cannot mark {} after a failed close; the next open will ask for the -wal file"
          + " ({})", layout.what(), directory, layout.open().getFileName(), e.toString());
    }
  }

  private static boolean walCheckpointedAtClose(Layout layout) throws IOException {
    String marker = Files.readString(layout.open(), StandardCharsets.US_ASCII).strip();
    return marker.equals(WAL_CHECKPOINTED) || marker.equals(CLOSING_CHECKPOINTED);
  }

  /**
   * Marks, during a clean close, that SQLite has checkpointed every commit into the database file
   * (and synced it), before SQLite's last close removes the {@code -wal} file and before
   * {@link #markClosed} removes the marker. A JVM that halts in between (SIGTERM while the app's
   * own thread closes the store: the shutdown hook waits for that close only so long) leaves this
   * mark: the next open recovers as after a crash, but does not refuse the store for a missing
   * {@code -wal} file that held nothing the database lacks. Without it, the next open found the
   * plain open marker and no {@code -wal} file, and asked for a backup of an intact store. The
   * mark is true from the moment it is written: the store has no other writer, and its own are
   * stopped. Only a store that owns its files marks it (in an app's file, other connections may
   * write after the checkpoint). A failure to write it is logged and leaves the marker as it was.
   */
  void markCheckpointedAtClose() {
    try {
      writeDurably(layout.open(), CLOSING_CHECKPOINTED + "\n");
    } catch (IOException e) {
      LOG.warn("Idem {} {}: cannot mark {} before the close's last step ({})", layout.what(), directory,
          layout.open().getFileName(), e.toString());
    }
  }

  /** Releases the database file's lock and the process lock ({@link FileLocks.Held#close()}). */
  @Override
  public void close() {
    fileLock.close();
    lock.close();
  }

  /** Sets {@code rw-------} on every journal file (SQLite may have added its -wal and -shm files). */
  private void tightenAll() throws IOException {
    if (!isPosix(directory)) {
      return;
    }
    // The store's own files only: a guard's database may sit in a directory of the app's.
    for (Path f : new Path[] {layout.database(), layout.wal(), layout.shm(), layout.lock(), fileLock.file(),
        layout.id(), layout.open()}) {
      try {
        tighten(f);
      } catch (NoSuchFileException ignored) {
        // a -shm or -wal file removed meanwhile
      }
    }
  }

  private static void tighten(Path f) throws IOException {
    if (Files.isRegularFile(f) && isPosix(f) && !Files.getPosixFilePermissions(f).equals(FILE_PERMISSIONS)) {
      Files.setPosixFilePermissions(f, FILE_PERMISSIONS);
    }
  }

  private void writeDurably(Path file, String content) throws IOException {
    Path tmp = directory.resolve(file.getFileName() + ".tmp");
    try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(StandardCharsets.US_ASCII.encode(content));
      ch.force(true);
    }
    tighten(tmp);
    Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    syncDirectory();
  }

  /** Makes the directory's entries (a file just created, a rename) durable, where the file system can. */
  void syncDirectory() throws IOException {
    try (FileChannel d = FileChannel.open(directory, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException e) {
      // Some file systems cannot open a directory for sync; the rename is still atomic there.
      LOG.debug("Idem {} {}: directory sync not supported ({})", layout.what(), directory, e.toString());
    }
  }

  private static void createDirectory(Path dir, Layout layout) throws IOException, JournalException {
    String what = layout.what();
    refuseDanglingLink(dir, layout);
    if (!layout.ownsFiles()) {
      // A file in the app's directory: the app made the directory and decides who may read it.
      if (!Files.isDirectory(dir)) {
        throw new JournalException("cannot open the " + what + " " + dir.resolve(layout.databaseFile()) + ": its"
            + " directory " + dir + " does not exist", null);
      }
    } else if (!Files.exists(dir)) {
      Files.createDirectories(dir, ownerOnly(dir.getParent(), DIRECTORY_PERMISSIONS));
    } else if (!Files.isDirectory(dir)) {
      throw new JournalException("the " + what + " directory " + dir + " is a file, not a directory: give the " + what
          + " a directory of its own (it holds " + layout.databaseFile() + " and its companion files)", null);
    } else if (isPosix(dir)) {
      Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir);
      if (!perms.equals(DIRECTORY_PERMISSIONS)) {
        LOG.warn("Idem {} directory {} had permissions {}; setting {} (the directory belongs to the {})", what,
            dir, PosixFilePermissions.toString(perms), PosixFilePermissions.toString(DIRECTORY_PERMISSIONS), what);
        Files.setPosixFilePermissions(dir, DIRECTORY_PERMISSIONS);
      }
    }
    if (!Files.isWritable(dir)) {
      throw cannotWrite(layout, "permission denied (read-only directory?)", null);
    }
  }

  /**
   * Refuses a store directory that is, or lies under, a symbolic link whose target does not exist
   * ({@code /var/lib/app -> /data/app} before the volume is mounted or the directory created). The
   * target is not created: where it is missing because a volume is not mounted yet, it would be
   * created on the disk under the mount point, and the store would start empty there and be
   * hidden by the volume once mounted, forgetting every operation it held in between. The operator
   * creates it (or mounts the volume) once; a plain missing directory is still created.
   *
   * @param dir the store's directory (absolute, normalized), which the caller found missing or not
   */
  static void refuseDanglingLink(Path dir, Layout layout) throws IOException, JournalException {
    for (Path p = dir; p != null && !Files.exists(p); p = p.getParent()) {
      if (Files.isSymbolicLink(p)) {
        Path target = p.getParent().resolve(Files.readSymbolicLink(p));
        String named = p.equals(dir) ? "the " + layout.what() + " directory " + dir + " is"
            : "the " + layout.what() + " directory " + dir + " is under " + p + ", which is";
        throw new JournalException(named + " a symbolic link to " + target + ", which does not exist (a volume not"
            + " mounted yet?). The " + layout.what() + " does not create a link's target, so that it never writes"
            + " under a volume's mount point: mount the volume, or create " + target + ", then open again", null);
      }
    }
  }

  /** {@code permissions} to create a file or directory with, where {@code where} has POSIX permissions. */
  private static FileAttribute<?>[] ownerOnly(Path where, Set<PosixFilePermission> permissions) {
    return isPosix(where) ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(permissions)}
        : new FileAttribute<?>[0];
  }

  private static boolean isPosix(Path p) {
    Path probe = p == null ? Path.of("").toAbsolutePath() : p;
    return probe.getFileSystem().supportedFileAttributeViews().contains("posix")
        && Files.getFileAttributeView(probe, PosixFileAttributeView.class) != null;
  }
}
