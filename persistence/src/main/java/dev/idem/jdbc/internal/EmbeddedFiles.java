package dev.idem.jdbc.internal;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 *   <li>{@code idem-journal.lock}: locked ({@link FileChannel#tryLock()}) by the one process that
 *       has the journal open. SQLite's own locks let several processes share a database; a journal
 *       must not be shared, because an embedded journal treats every in-flight lease it finds at
 *       open as a dead process's.</li>
 *   <li>{@code idem-journal.id}: the journal's id, also stored in the database. A directory with
 *       this file and no database (deleted), an empty database (truncated) or another journal's
 *       database (swapped) is refused with an explanation instead of being answered with a fresh,
 *       empty journal that would forget every pending operation.</li>
 *   <li>{@code idem-journal.open}: present while a process has the journal open and removed by a
 *       clean close. Finding it at open means the last process stopped without closing: a crash.</li>
 * </ul>
 */
public final class EmbeddedFiles implements AutoCloseable {
  /** The base name of the journal's files. */
  public static final String BASE_NAME = "idem-journal";
  /** The SQLite database. */
  public static final String DATABASE_FILE = BASE_NAME + ".db";
  /** SQLite's write-ahead log; part of the database until SQLite checkpoints it. */
  public static final String WAL_FILE = DATABASE_FILE + "-wal";
  static final String LOCK_FILE = BASE_NAME + ".lock";
  static final String ID_FILE = BASE_NAME + ".id";
  static final String OPEN_FILE = BASE_NAME + ".open";
  /** The open marker's content after a failed close that left no {@code -wal} file. */
  private static final String WAL_CHECKPOINTED = "closed after a failure; -wal checkpointed";
  /** What an Idem 0.1 journal directory holds (H2), which this version no longer opens. */
  public static final String H2_DATA_FILE = BASE_NAME + ".mv.db";

  static final Set<PosixFilePermission> DIRECTORY_PERMISSIONS = PosixFilePermissions.fromString("rwx------");
  static final Set<PosixFilePermission> FILE_PERMISSIONS = PosixFilePermissions.fromString("rw-------");
  private static final Logger LOG = LoggerFactory.getLogger(EmbeddedFiles.class);

  private final Path directory;
  private final FileChannel lockChannel;
  private final FileLock lock;
  private final boolean crashed;
  private final boolean created;
  private final String expectedId;

  private EmbeddedFiles(Path directory, FileChannel lockChannel, FileLock lock, boolean crashed, boolean created,
      String expectedId) {
    this.directory = directory;
    this.lockChannel = lockChannel;
    this.lock = lock;
    this.crashed = crashed;
    this.created = created;
    this.expectedId = expectedId;
  }

  /**
   * Creates the directory and the database file if they are missing, with owner-only permissions,
   * takes the process lock, and checks that the database is the one the directory's id file
   * names.
   *
   * @throws JournalException if the directory cannot be created or written, another process holds
   *     the journal, or the database file is missing, empty or another journal's while the id file
   *     says a journal lived here
   */
  public static EmbeddedFiles prepare(Path directory) throws JournalException {
    Path dir = directory.toAbsolutePath().normalize();
    try {
      createDirectory(dir);
      dir = dir.toRealPath();
      if (Files.exists(dir.resolve(H2_DATA_FILE)) && !Files.exists(dir.resolve(DATABASE_FILE))) {
        throw new JournalException("the journal directory " + dir + " holds an H2 journal of Idem 0.1 ("
            + H2_DATA_FILE + "), which this version no longer opens: H2 lost committed rows under repeated"
            + " kills. Finish or re-drive its operations with Idem 0.1 first, or move the directory aside to start"
            + " a new SQLite journal here", null);
      }
      FileChannel channel = FileChannel.open(dir.resolve(LOCK_FILE), StandardOpenOption.CREATE,
          StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException e) {
        channel.close();
        throw new JournalException("the journal at " + dir + " is already open in this JVM; share one JdbcJournal"
            + " instance (it is thread-safe) instead of opening it twice", null);
      }
      if (lock == null) {
        channel.close();
        throw new JournalException("the journal at " + dir + " is open in another process; an embedded journal"
            + " belongs to one process (use PostgreSQL to share a journal between processes)", null);
      }
      try {
        tighten(dir.resolve(LOCK_FILE));
        return checked(dir, channel, lock);
      } catch (IOException | RuntimeException e) {
        channel.close();
        throw e;
      }
    } catch (JournalException e) {
      throw e;
    } catch (FileAlreadyExistsException e) {
      throw new JournalException("cannot create the journal directory " + dir + ": a file is in the way", e);
    } catch (AccessDeniedException e) {
      throw cannotWrite(dir, "permission denied (read-only directory?)", e);
    } catch (FileSystemException e) {
      throw cannotWrite(dir, e.getReason() == null ? e.getClass().getSimpleName() : e.getReason(), e);
    } catch (IOException e) {
      throw cannotWrite(dir, e.getClass().getSimpleName(), e);
    }
  }

  /**
   * A journal directory that cannot be written: "cannot create" only if there is no journal yet; an
   * existing one (on a read-only mount, say) is named as such, with what can still read it.
   */
  private static JournalException cannotWrite(Path dir, String reason, Exception cause) {
    if (Files.exists(dir.resolve(DATABASE_FILE))) {
      return new JournalException("the journal in " + dir + " cannot be opened for writing: " + reason + " (a"
          + " read-only file system or directory?). The journal needs to write before anything is sent; to read it"
          + " as it is, use JdbcJournal.openReadOnly (the CLI's list, show and stats)", cause);
    }
    return new JournalException("cannot create the journal in " + dir + ": " + reason, cause);
  }

  private static EmbeddedFiles checked(Path dir, FileChannel channel, FileLock lock)
      throws IOException, JournalException {
    Path db = dir.resolve(DATABASE_FILE);
    Path idFile = dir.resolve(ID_FILE);
    String id = Files.exists(idFile) ? Files.readString(idFile, StandardCharsets.US_ASCII).strip() : null;
    boolean dbExists = Files.exists(db);
    if (id != null && !dbExists) {
      throw new JournalException("the journal database " + db + " is missing, but " + idFile + " says journal " + id
          + " lived here: it was deleted or moved. Restore it (with its " + WAL_FILE + " file, if any) from a backup;"
          + " or, to start an empty journal and forget every operation it held, delete " + idFile, null);
    }
    boolean crashed = Files.exists(dir.resolve(OPEN_FILE));
    if (crashed && id != null && !Files.exists(dir.resolve(WAL_FILE)) && !walCheckpointedAtClose(dir)) {
      // SQLite removes the -wal file only when the last connection closes cleanly. After a crash it
      // holds commits not yet copied into the database: without it the journal would silently be
      // older than what was acknowledged.
      throw new JournalException("the journal at " + dir + " was not closed cleanly, and its " + WAL_FILE
          + " file, which holds its latest commits, is missing: operations acknowledged as journaled may be lost."
          + " Restore the file from a backup; or, to open what is left, delete " + dir.resolve(OPEN_FILE), null);
    }
    Path wal = dir.resolve(WAL_FILE);
    if (id != null && dbExists && Files.size(db) == 0 && (!Files.exists(wal) || Files.size(wal) == 0)) {
      // Refused before SQLite opens it: SQLite would write a new header into the empty file. (A
      // killed journal may have an empty database file while all its commits are in the -wal.)
      throw new JournalException("the journal database " + db + " is empty or not a journal, but " + idFile
          + " says journal " + id + " lived here: the file was truncated or replaced. Restore it from a backup; or,"
          + " to start an empty journal and forget every operation it held, delete " + idFile + " and " + db, null);
    }
    if (!dbExists) {
      if (isPosix(dir)) {
        Files.createFile(db, PosixFilePermissions.asFileAttribute(FILE_PERMISSIONS));
      } else {
        Files.createFile(db);
      }
    } else if (!Files.isWritable(db)) {
      throw new JournalException("the journal file " + db + " is read-only; the journal needs to write it before"
          + " anything is sent", null);
    } else if (Files.isDirectory(db)) {
      throw new JournalException("the journal file " + db + " is a directory", null);
    }
    return new EmbeddedFiles(dir, channel, lock, crashed, !dbExists, id);
  }

  /** The journal directory (its real path). */
  public Path directory() {
    return directory;
  }

  /** The SQLite database file. */
  public Path database() {
    return directory.resolve(DATABASE_FILE);
  }

  /** True if the last process that had the journal open stopped without closing it. */
  public boolean crashed() {
    return crashed;
  }

  /**
   * Checks the id stored in the database against the directory's id file, and writes whichever is
   * missing (a new journal, or one made before the id file existed). Then marks the journal open.
   *
   * @param storedId the id in the database, or null if it has none
   * @return the id the database must store, if it has none yet; otherwise null
   * @throws JournalException if the two ids differ, or the id file names a journal and the
   *     database has no id (it was truncated or replaced by an empty one)
   */
  public String reconcileId(String storedId) throws JournalException {
    Path idFile = directory.resolve(ID_FILE);
    if (expectedId != null && storedId == null) {
      throw new JournalException("the journal database " + database() + " is empty or not a journal, but " + idFile
          + " says journal " + expectedId + " lived here: the file was truncated or replaced. Restore it from a"
          + " backup; or, to start an empty journal and forget every operation it held, delete " + idFile
          + " and " + database(), null);
    }
    if (expectedId != null && !expectedId.equals(storedId)) {
      throw new JournalException("the journal database " + database() + " belongs to journal " + storedId + ", not to"
          + " journal " + expectedId + " named by " + idFile + ": a database file from elsewhere was copied in."
          + " Put the right file back, or move this directory aside", null);
    }
    return storedId == null ? UUID.randomUUID().toString() : null;
  }

  /** Writes the id file (after the database has stored the same id) and marks the journal open. */
  public void markOpen(String idToWrite) throws JournalException {
    try {
      if (idToWrite != null || !Files.exists(directory.resolve(ID_FILE))) {
        String id = idToWrite != null ? idToWrite : expectedId;
        if (id != null) {
          writeDurably(directory.resolve(ID_FILE), id + "\n");
        }
      }
      writeDurably(directory.resolve(OPEN_FILE), "open\n");
      tightenAll();
    } catch (IOException e) {
      throw new JournalException("cannot write the journal's marker files in " + directory + ": " + e, e);
    }
  }

  /** Marks a clean close: the next open has nothing to recover. */
  public void markClosed() {
    try {
      Files.deleteIfExists(directory.resolve(OPEN_FILE));
      syncDirectory();
    } catch (IOException e) {
      LOG.warn("Idem journal {}: cannot remove {} on close; the next open will treat the close as a crash ({})",
          directory, OPEN_FILE, e.toString());
    }
  }

  /**
   * Marks a close that was not clean (the journal had failed, say on a full disk) but after which
   * SQLite checkpointed every commit into the database and removed the {@code -wal} file: the next
   * open still recovers as after a crash, but must not ask for a {@code -wal} file that held
   * nothing. Without this mark it refused to open, asking for a backup of a file that was never
   * lost. With a {@code -wal} file left, the crash marker stays as it is.
   */
  public void markClosedAfterFailure() {
    if (Files.exists(directory.resolve(WAL_FILE))) {
      return;
    }
    try {
      writeDurably(directory.resolve(OPEN_FILE), WAL_CHECKPOINTED + "\n");
    } catch (IOException e) {
      LOG.warn("Idem journal {}: cannot mark {} after a failed close; the next open will ask for the -wal file"
          + " ({})", directory, OPEN_FILE, e.toString());
    }
  }

  private static boolean walCheckpointedAtClose(Path dir) throws IOException {
    return Files.readString(dir.resolve(OPEN_FILE), StandardCharsets.US_ASCII).strip().equals(WAL_CHECKPOINTED);
  }

  /** Releases the process lock. */
  @Override
  public void close() {
    try {
      lock.release();
    } catch (IOException ignored) {
      // the channel close below releases it too
    }
    try {
      lockChannel.close();
    } catch (IOException ignored) {
      // nothing left to do: the OS drops the lock with the process
    }
  }

  /** Sets {@code rw-------} on every journal file (SQLite may have added its -wal and -shm files). */
  public void tightenAll() throws IOException {
    if (!isPosix(directory)) {
      return;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, BASE_NAME + ".*")) {
      for (Path f : files) {
        tighten(f);
      }
    } catch (NoSuchFileException ignored) {
      // a -shm or -wal file removed meanwhile
    }
  }

  /** True if this open created the database file. */
  public boolean created() {
    return created;
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

  private void syncDirectory() throws IOException {
    try (FileChannel d = FileChannel.open(directory, StandardOpenOption.READ)) {
      d.force(true);
    } catch (IOException e) {
      // Some file systems cannot open a directory for sync; the rename is still atomic there.
      LOG.debug("Idem journal {}: directory sync not supported ({})", directory, e.toString());
    }
  }

  private static void createDirectory(Path dir) throws IOException, JournalException {
    if (!Files.exists(dir)) {
      if (isPosix(dir.getParent())) {
        Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(DIRECTORY_PERMISSIONS));
      } else {
        Files.createDirectories(dir);
      }
    } else if (!Files.isDirectory(dir)) {
      throw new JournalException("the journal directory " + dir + " is a file, not a directory: give the journal a"
          + " directory of its own (it holds " + DATABASE_FILE + " and its companion files)", null);
    } else if (isPosix(dir)) {
      Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir);
      if (!perms.equals(DIRECTORY_PERMISSIONS)) {
        LOG.warn("Idem journal directory {} had permissions {}; setting {} (the directory belongs to the journal)",
            dir, PosixFilePermissions.toString(perms), PosixFilePermissions.toString(DIRECTORY_PERMISSIONS));
        Files.setPosixFilePermissions(dir, DIRECTORY_PERMISSIONS);
      }
    }
    if (!Files.isWritable(dir)) {
      throw cannotWrite(dir, "permission denied (read-only directory?)", null);
    }
  }

  private static boolean isPosix(Path p) {
    Path probe = p == null ? Path.of("").toAbsolutePath() : p;
    return probe.getFileSystem().supportedFileAttributeViews().contains("posix")
        && Files.getFileAttributeView(probe, PosixFileAttributeView.class) != null;
  }
}
