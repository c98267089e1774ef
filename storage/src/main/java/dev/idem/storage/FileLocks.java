package dev.idem.storage;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The OS lock that keeps a store to one owner: {@link FileChannel#tryLock()} on a lock file, held
 * while its channel stays open (closing the channel, or the process ending, releases it). The
 * embedded store ({@link EmbeddedFiles}) and a store in an app's SQLite file
 * ({@link SqliteFileLock}) both take theirs here, and say in their own words who holds it.
 *
 * <p>The lock is a POSIX record lock on Linux and macOS (fcntl), which belongs to the process, not
 * to the descriptor: the kernel drops all of the process's locks on a file as soon as the process
 * closes <em>any</em> descriptor of that file. A second open of a store in this JVM (a second Spring
 * context in a test JVM, a retry loop around an open, a duplicate bean) must therefore be refused
 * without opening the lock file at all: opened, refused and closed, it would release the lock the
 * first open still holds, and another process could then open the store and resend this one's
 * in-flight operations. So this class keeps the one registry that must be process-wide, as the
 * kernel's lock is: every lock file this JVM (this class loader) keeps a descriptor of, by the
 * file's identity ({@link BasicFileAttributes#fileKey()}: device and inode, so a hard link, a
 * symbolic link or a bind mount of a held file is the same file), checked with a {@code stat}
 * before any descriptor is opened. A descriptor of a lock file is closed only when this JVM holds
 * no lock on that file, or when the lock it holds is being released.
 *
 * <p>A lock file can be removed while it is held (a temp-file cleaner, a deploy script clearing
 * "stale" lock files): the lock stays on the unlinked file, and the next open creates and locks a
 * new one. So a lock may also guard the file it stands for ({@link Guard}, a store's database
 * file): this JVM refuses a second lock for a file it already guards, whatever became of the lock
 * file, again with a {@code stat} only, as long as the guarded file keeps its path or the lock
 * file keeps its own (a guarded file gone from both may have had its inode reused by a new file:
 * {@link Held#standsFor}); and the holder can tell, with one {@code stat}, whether the lock file's
 * path still names the file it locked ({@link Held#file()}). Another process cannot be
 * kept out that way: nothing it can check without a lock file says that this one holds the store.
 *
 * <p>Thread-safe: taking and releasing a lock are serialized on the registry (opens are rare, and
 * {@code tryLock} does not wait), so that no close of one can fall between another's check and its
 * lock.
 */
final class FileLocks {
  /**
   * Every lock file this class keeps a descriptor of, by identity ({@link #identityOf}). Guarded by
   * itself. Bounded by the lock files this JVM has tried to lock and not released.
   */
  private static final Map<Object, Slot> SLOTS = new HashMap<>();
  /**
   * The files this JVM's held locks guard ({@link Guard}), by {@link Guard#kind} and identity. Guarded
   * by {@link #SLOTS}. Bounded by the held locks: one entry each at most.
   */
  private static final Map<List<Object>, Held> GUARDED = new HashMap<>();

  private FileLocks() {}

  /** What a store says when its lock is held. */
  @FunctionalInterface
  interface Refusal {
    /**
     * @param inThisJvm true if another open in this JVM holds the lock, false if another process does
     */
    JournalException held(boolean inThisJvm);
  }

  /**
   * The file a lock stands for (a store's database file), and which kind of lock of it this is (a
   * file may hold several stores, one lock each): while the lock is held, this JVM refuses another
   * lock of the same kind for the same file, found by its identity, even after the lock file was
   * removed and a new one could be locked.
   *
   * @param file the guarded file; it may not exist yet ({@link Held#guardNow()})
   * @param kind what the lock is for, such as the store's name
   */
  record Guard(Path file, String kind) {}

  /**
   * A lock this JVM holds on a lock file, until {@link #close()}. Thread-safe; closing twice is harmless.
   */
  static final class Held implements AutoCloseable {
    private final Object identity;
    private final Slot slot;
    private final Guard guard;
    /** The key this lock guards in {@link #GUARDED}, or null; under {@link #SLOTS}. */
    private List<Object> guarded;

    private Held(Object identity, Slot slot, Guard guard) {
      this.identity = identity;
      this.slot = slot;
      this.guard = guard;
    }

    /**
     * The lock file as it was locked: {@link FileIdentity#change()} says whether its path still
     * names that file, with one {@code stat}. Once it does not, another process may hold a lock
     * on the file now at the path (or may take one), and with it the store.
     */
    FileIdentity file() {
      return slot.file;
    }

    /**
     * Guards the {@link Guard} file from now on, if it exists and is not guarded yet: for a file
     * created after the lock was taken. A {@code stat}, no descriptor.
     */
    void guardNow() throws IOException {
      synchronized (SLOTS) {
        if (guard == null || guarded != null || SLOTS.get(identity) != slot) {
          return;
        }
        Object file = identityOf(guard.file());
        if (file != null) {
          List<Object> key = List.of(guard.kind(), file);
          Held holder = GUARDED.get(key);
          if (holder != null && holder != this && !holder.standsFor(file)) {
            holder.forgetGuard();
          }
          GUARDED.putIfAbsent(key, this);
          guarded = GUARDED.get(key) == this ? key : null;
        }
      }
    }

    /**
     * Whether this lock still stands for the guarded file {@code identity}: its lock file is still
     * at its path, or its guarded file's path still names {@code identity}. Neither, and the file
     * this lock guarded has left both paths: a directory removed with the store still open (a test's
     * temp directory, a cleaner). Its inode is then free once nothing keeps it open (SQLite's
     * connections closed), and a new file elsewhere may get it: that file is not this lock's, and
     * must not be refused as if it were. What such a guard gives up is one case only: the same
     * file, hard-linked elsewhere before both paths went, opened again in this JVM; its holder has
     * seen its lock file go ({@link #file()}) and stops acknowledging commits by then.
     */
    private boolean standsFor(Object identity) {
      if (slot.file.change() == null) {
        return true;
      }
      try {
        return identity.equals(identityOf(guard.file()));
      } catch (IOException e) {
        return true; // unreadable is not gone: refused, as before
      }
    }

    /** Stops guarding (under {@link #SLOTS}): the guarded file is no longer this lock's ({@link #standsFor}). */
    private void forgetGuard() {
      GUARDED.remove(guarded, this);
      guarded = null;
    }

    /** Releases the lock: closes the lock file's descriptors, then forgets the file, in that order. */
    @Override
    public void close() {
      synchronized (SLOTS) {
        if (SLOTS.get(identity) != slot) {
          return; // already released
        }
        // Closed before the file is forgotten: an open that finds it forgotten may then open and
        // lock the file, and a close after its lock would release that lock too.
        slot.closeAll();
        SLOTS.remove(identity);
        if (guarded != null) {
          forgetGuard();
        }
      }
    }
  }

  /**
   * A lock file's descriptor kept open by this JVM: the one holding its lock, or one parked because
   * another holder in this JVM outside this registry (a copy of this class in another class loader)
   * held the lock when it was opened. A parked descriptor cannot be closed without releasing that
   * holder's lock; it is tried again by the next open of the same file instead of opening another.
   */
  private static final class Slot {
    final FileChannel channel;
    /** The file the channel has open, as found just after it was opened. */
    final FileIdentity file;
    boolean locked;
    /** Descriptors of the file opened by a lock attempt that lost a race with a rename; closed with the slot. */
    final List<FileChannel> strays = new ArrayList<>(1);

    Slot(FileChannel channel, FileIdentity file) {
      this.channel = channel;
      this.file = file;
    }

    void closeAll() {
      closeQuietly(channel);
      strays.forEach(FileLocks::closeQuietly);
      strays.clear();
    }
  }

  /**
   * Takes the lock of {@code file}, creating the file if it is missing. Refuses without opening a
   * descriptor of the file if this JVM already holds its lock under any name.
   *
   * @return the lock, held until its {@link Held#close()}
   * @throws JournalException from {@code refusal}, if this JVM or another process holds the lock
   * @throws IOException if the file cannot be created or opened, or the lock could not be tried
   */
  static Held lock(Path file, Refusal refusal) throws IOException {
    return lock(file, null, refusal);
  }

  /**
   * Like {@link #lock(Path, Refusal)}, and refuses too if this JVM holds a lock that guards the same
   * file as {@code guard}, under any lock file (one removed since included); the lock taken guards
   * it, if it exists, until released ({@link Held#guardNow()} for a file created later).
   *
   * @param guard the file the lock stands for, or null
   */
  static Held lock(Path file, Guard guard, Refusal refusal) throws IOException {
    synchronized (SLOTS) {
      if (guard != null) {
        Object guarded = identityOf(guard.file());
        Held holder = guarded == null ? null : GUARDED.get(List.of(guard.kind(), guarded));
        if (holder != null) {
          if (holder.standsFor(guarded)) {
            throw refusal.held(true);
          }
          holder.forgetGuard();
        }
      }
      Held held = lockFile(file, guard, refusal);
      try {
        held.guardNow();
      } catch (IOException | RuntimeException e) {
        held.close(); // the file cannot be read: the open fails, and holds nothing
        throw e;
      }
      return held;
    }
  }

  private static Held lockFile(Path file, Guard guard, Refusal refusal) throws IOException {
    synchronized (SLOTS) {
      Object before = identityOf(file);
      Slot slot = before == null ? null : SLOTS.get(before);
      if (slot != null) {
        if (slot.locked) {
          throw refusal.held(true);
        }
        return lockParked(before, slot, guard, refusal);
      }
      FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      Object identity;
      FileIdentity opened;
      try {
        BasicFileAttributes attributes = attributesOf(file);
        if (attributes == null) {
          throw new NoSuchFileException(file.toString(), null, "removed as soon as it was opened");
        }
        identity = identityOf(file, attributes);
        opened = new FileIdentity(file, attributes.fileKey(), attributes.creationTime());
      } catch (IOException | RuntimeException e) {
        closeQuietly(channel); // this JVM holds no lock on the file: the check above found none
        throw e;
      }
      Slot known = SLOTS.get(identity);
      if (known != null) {
        // The name was renamed onto a file this JVM keeps open between the check and the open: the
        // new descriptor stays open until that file's lock is released, since closing it would
        // release that lock now.
        known.strays.add(channel);
        throw refusal.held(true);
      }
      boolean locked;
      try {
        locked = channel.tryLock() != null;
      } catch (OverlappingFileLockException e) {
        // Held in this JVM, but not through this registry (another class loader's copy of this
        // class): closing the descriptor would release that lock. Parked, and tried again by the
        // next open of this file rather than opening one more descriptor each time.
        SLOTS.put(identity, new Slot(channel, opened));
        throw refusal.held(true);
      } catch (IOException | RuntimeException e) {
        closeQuietly(channel); // the JVM holds no lock on the file (tryLock would have said so)
        throw e;
      }
      if (!locked) {
        closeQuietly(channel); // held by another process only: this JVM has nothing to lose
        throw refusal.held(false);
      }
      Slot taken = new Slot(channel, opened);
      taken.locked = true;
      SLOTS.put(identity, taken);
      return new Held(identity, taken, guard);
    }
  }

  /** Tries the lock again on a parked descriptor of the file; it stays parked if refused. */
  private static Held lockParked(Object identity, Slot slot, Guard guard, Refusal refusal) throws IOException {
    boolean locked;
    try {
      locked = slot.channel.tryLock() != null;
    } catch (OverlappingFileLockException e) {
      throw refusal.held(true);
    }
    if (!locked) {
      throw refusal.held(false);
    }
    slot.locked = true;
    return new Held(identity, slot, guard);
  }

  /**
   * The identity of a file, following links, without opening it: its {@link BasicFileAttributes#fileKey()}
   * (device and inode), or, where the file system has none, its real path. Null if it does not exist.
   */
  private static Object identityOf(Path file) throws IOException {
    BasicFileAttributes attributes = attributesOf(file);
    return attributes == null ? null : identityOf(file, attributes);
  }

  private static Object identityOf(Path file, BasicFileAttributes attributes) throws IOException {
    Object key = attributes.fileKey();
    return key != null ? key : file.toRealPath();
  }

  /** The attributes of a file, following links; null if it does not exist. */
  private static BasicFileAttributes attributesOf(Path file) throws IOException {
    try {
      return Files.readAttributes(file, BasicFileAttributes.class);
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  /** Closes a lock file's channel, which releases its lock. */
  private static void closeQuietly(FileChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // nothing left to do: the OS drops the lock with the process
    }
  }
}
