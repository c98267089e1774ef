package dev.idem.server;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A child JVM that tries SQLite's "DMS" lock of a {@code -shm} file exclusively (byte 128; every
 * process with a connection on the database holds it shared, and a process that gets it
 * exclusively takes itself for the first one and truncates and rebuilds the index). Exits 0 if the
 * lock is held by another process (refused), 1 if it could be taken, 2 on anything else.
 */
public final class ShmDmsLockProbeChild {
  private ShmDmsLockProbeChild() {}

  public static void main(String[] args) {
    try (FileChannel ch = FileChannel.open(Path.of(args[0]), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      FileLock lock = ch.tryLock(128, 1, false);
      if (lock == null) {
        System.out.println("HELD");
        System.exit(0);
      }
      lock.release();
      System.out.println("FREE");
      System.exit(1);
    } catch (Throwable t) {
      System.out.println("OTHER " + t);
      System.exit(2);
    }
  }
}
