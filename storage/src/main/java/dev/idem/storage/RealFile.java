package dev.idem.storage;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The real path of a SQLite database file: the file SQLite opens, which follows symbolic links.
 * Every file a store keeps of its own beside the database (its locks, its id and open marker, the
 * {@code -wal} file it syncs) is named from this path, so that opens of one file by two names (a
 * link and its target, a linked directory) are one store to Idem, as they are one database to
 * SQLite. Unlike {@link Path#toRealPath}, it answers for a file that does not exist yet: the
 * target of a link to it, or its name in its directory's real path. Stateless.
 */
final class RealFile {
  /** As the kernel's limit on links followed in one lookup (Linux's is 40). */
  private static final int MAX_LINKS = 40;

  private RealFile() {}

  /**
   * @param file a database file, existing or not
   * @return its real path; {@code file} made absolute and normalized if its directory does not
   *     exist either (the open then fails on that, naming it)
   * @throws IOException if a link cannot be read, or links loop
   */
  static Path of(Path file) throws IOException {
    Path p = file.toAbsolutePath().normalize();
    for (int links = 0; links <= MAX_LINKS; links++) {
      if (Files.exists(p)) {
        return p.toRealPath();
      }
      Path parent = p.getParent();
      if (parent == null || !Files.isDirectory(parent)) {
        return p;
      }
      Path named = parent.toRealPath().resolve(p.getFileName());
      if (!Files.isSymbolicLink(named)) {
        return named;
      }
      // A link whose target does not exist yet: SQLite creates the target. Not normalized here: a
      // ".." after a linked directory in the target is the OS's to resolve (toRealPath, next turn).
      p = named.getParent().resolve(Files.readSymbolicLink(named));
    }
    throw new FileSystemException(file.toString(), null, "too many levels of symbolic links");
  }
}
