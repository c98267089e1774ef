package dev.idem.jdbc.internal;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files of an embedded H2 journal: a directory readable by its owner only ({@code rwx------})
 * holding {@code idem-journal.mv.db} ({@code rw-------}). The data file is created empty with those
 * permissions before H2 opens it, so it is never readable by others, not even briefly.
 */
public final class H2Files {
  /** The base name of the H2 database in the journal directory. */
  public static final String BASE_NAME = "idem-journal";
  /** The H2 data file name. */
  public static final String DATA_FILE = BASE_NAME + ".mv.db";
  /** The journal's write-ahead log ({@link LoggedStore}), next to the data file. */
  public static final String LOG_FILE = BASE_NAME + ".wal";

  static final Set<PosixFilePermission> DIRECTORY_PERMISSIONS = PosixFilePermissions.fromString("rwx------");
  static final Set<PosixFilePermission> FILE_PERMISSIONS = PosixFilePermissions.fromString("rw-------");
  private static final Logger LOG = LoggerFactory.getLogger(H2Files.class);

  private H2Files() {
  }

  /**
   * Creates the directory and the data file if they are missing, with owner-only permissions, and
   * checks both are writable.
   *
   * @return the real path of the directory
   * @throws JournalException if the directory or file cannot be created, or is read-only
   */
  public static Path prepare(Path directory) throws JournalException {
    Path dir = directory.toAbsolutePath().normalize();
    if (dir.toString().contains(";")) {
      throw new JournalException("the journal directory path must not contain ';': " + dir, null);
    }
    try {
      if (!Files.exists(dir)) {
        if (isPosix(dir.getParent())) {
          Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(DIRECTORY_PERMISSIONS));
        } else {
          Files.createDirectories(dir);
        }
      } else if (!Files.isDirectory(dir)) {
        throw new JournalException("the journal directory " + dir + " exists but is not a directory", null);
      } else {
        tightenDirectory(dir);
      }
      dir = dir.toRealPath();
      Path file = dir.resolve(DATA_FILE);
      if (!Files.exists(file)) {
        if (isPosix(dir)) {
          Files.createFile(file, PosixFilePermissions.asFileAttribute(FILE_PERMISSIONS));
        } else {
          Files.createFile(file);
        }
      } else if (!Files.isWritable(file)) {
        throw new JournalException("the journal file " + file + " is read-only; the journal needs to write it"
            + " before anything is sent", null);
      }
      return dir;
    } catch (JournalException e) {
      throw e; // an IOException too, but already explained
    } catch (FileAlreadyExistsException e) {
      throw new JournalException("cannot create the journal directory " + dir + ": a file is in the way", e);
    } catch (AccessDeniedException e) {
      throw new JournalException("cannot create the journal in " + dir + ": permission denied (read-only"
          + " directory?)", e);
    } catch (FileSystemException e) {
      throw new JournalException("cannot create the journal in " + dir + ": "
          + (e.getReason() == null ? e.getClass().getSimpleName() : e.getReason()), e);
    } catch (IOException e) {
      throw new JournalException("cannot create the journal in " + dir + ": " + e.getClass().getSimpleName(), e);
    }
  }

  /** Sets {@code rw-------} on every file of the journal in {@code dir} (H2 may add some after open). */
  public static void tightenFiles(Path dir) throws JournalException {
    if (!isPosix(dir)) {
      return;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, BASE_NAME + ".*")) {
      for (Path f : files) {
        if (Files.isRegularFile(f) && !Files.getPosixFilePermissions(f).equals(FILE_PERMISSIONS)) {
          Files.setPosixFilePermissions(f, FILE_PERMISSIONS);
        }
      }
    } catch (IOException e) {
      throw new JournalException("cannot restrict the permissions of the journal files in " + dir, e);
    }
  }

  private static void tightenDirectory(Path dir) throws IOException {
    if (!isPosix(dir)) {
      return;
    }
    Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir);
    if (!perms.equals(DIRECTORY_PERMISSIONS)) {
      LOG.warn("Idem journal directory {} had permissions {}; setting {} (the directory belongs to the journal)",
          dir, PosixFilePermissions.toString(perms), PosixFilePermissions.toString(DIRECTORY_PERMISSIONS));
      Files.setPosixFilePermissions(dir, DIRECTORY_PERMISSIONS);
    }
  }

  private static boolean isPosix(Path p) {
    Path probe = p == null ? Path.of("").toAbsolutePath() : p;
    return probe.getFileSystem().supportedFileAttributeViews().contains("posix")
        && Files.getFileAttributeView(probe, PosixFileAttributeView.class) != null;
  }

  /**
   * The JDBC URL of the journal in {@code dir}. The settings, and why:
   * <ul>
   *   <li>{@code WRITE_DELAY=0}: every commit writes its chunk to the file before returning, so a
   *       committed record survives kill -9. H2's default (500 ms) lost every committed row on
   *       {@code Runtime.halt()} in our measurements. The {@link LoggedStore} relies on it: it
   *       restarts its log once the rows are committed to H2 (and the file synced, with
   *       syncToDisk), and a delayed write would lose them.</li>
   *   <li>{@code TRACE_LEVEL_FILE=0}: no {@code .trace.db} file, which could hold SQL text with
   *       values (request data) and would be created with default permissions.</li>
   *   <li>{@code DB_CLOSE_ON_EXIT=FALSE}: the journal, not an H2 shutdown hook, decides when to
   *       close, so a journal still in use by the app's own shutdown hooks keeps working.</li>
   * </ul>
   * RETENTION_TIME keeps its default: setting it to 0 lost the last commit on halt in our
   * measurements.
   */
  public static String url(Path dir) {
    return "jdbc:h2:file:" + dir.resolve(BASE_NAME) + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0;DB_CLOSE_ON_EXIT=FALSE";
  }
}
