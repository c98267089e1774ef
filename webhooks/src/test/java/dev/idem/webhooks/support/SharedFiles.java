package dev.idem.webhooks.support;

import java.nio.file.Files;
import java.nio.file.Path;

/** Finds the shared test material beside the repository, never at a hard-coded path. */
public final class SharedFiles {
  private SharedFiles() {}

  /** The {@code shared/vectors} directory of the first ancestor of the working directory that has one. */
  public static Path vectors() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      Path v = p.resolve("shared").resolve("vectors");
      if (Files.isDirectory(v)) {
        return v;
      }
    }
    throw new IllegalStateException("no shared/vectors directory above " + Path.of("").toAbsolutePath()
        + "; the shared test material sits beside the repository");
  }
}
