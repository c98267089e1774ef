package dev.idem.storage;

import dev.idem.core.JournalException;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The embedded stores (journal, guard, inbox) open in this JVM, by database file. Two connections of one JVM could share the
 * database file silently, which would defeat the single-writer group commit; a second open of the
 * same directory in the same JVM is refused instead, just as a second process is refused by the
 * directory's lock file.
 */
public final class OpenStores {
  private static final Set<Path> OPEN = ConcurrentHashMap.newKeySet();

  private OpenStores() {
  }

  /** Registers {@code database} (a real, absolute path) as open, or fails if it already is. */
  public static void acquire(Path database, Layout layout) throws JournalException {
    if (!OPEN.add(database)) {
      throw new JournalException("the " + layout.what() + " at " + database + " is already open in this JVM; share"
          + " one " + layout.owner() + " instance (it is thread-safe) instead of opening it twice", null);
    }
  }

  /** Unregisters {@code database}. */
  public static void release(Path database) {
    OPEN.remove(database);
  }
}
