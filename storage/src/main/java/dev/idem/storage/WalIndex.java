package dev.idem.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Reads, never writes, how many {@code -wal} frames SQLite's {@code -shm} index says are committed
 * (sqlite.org/walformat.html, "The WAL-Index Format": two copies of a 48-byte header in the host's
 * byte order, with the WAL's salts and {@code mxFrame}, the last committed frame). SQLite updates
 * it after each commit is on the disk, and it outlives a kill -9 (a power loss may leave an older
 * one, which only says less). A {@code -wal} file with fewer intact frames than that lost commits
 * that were acknowledged: cut at a frame boundary, or damaged in its last transaction, which the
 * frames alone cannot tell from a write a crash cut short.
 *
 * <p>It opens and closes a descriptor of the {@code -shm} file, which drops every POSIX lock this
 * process holds on that file, SQLite's own: call it only where that cannot let another process
 * rebuild the index under a connection of this JVM ({@link WalCheck}).
 */
final class WalIndex {
  private static final int HEADER_COPY = 48;
  private static final int VERSION = 3007000;

  private WalIndex() {
  }

  /**
   * @param shm the {@code -shm} file
   * @param walSalts the 8 salt bytes of the {@code -wal} file's header, as stored
   * @return the committed frame count the index records for this WAL generation, or -1 if it
   *     cannot say (no index, a damaged one, or one of another generation)
   */
  static long committedFrames(Path shm, byte[] walSalts) throws IOException {
    if (!Files.isRegularFile(shm)) {
      return -1;
    }
    ByteBuffer b = ByteBuffer.allocate(2 * HEADER_COPY);
    try (FileChannel ch = FileChannel.open(shm, StandardOpenOption.READ)) {
      while (b.hasRemaining()) {
        if (ch.read(b, b.position()) < 0) {
          return -1;
        }
      }
    }
    byte[] all = b.array();
    byte[] first = Arrays.copyOfRange(all, 0, HEADER_COPY);
    if (!Arrays.equals(first, Arrays.copyOfRange(all, HEADER_COPY, 2 * HEADER_COPY))) {
      return -1; // a writer was changing it, or it is damaged: no statement
    }
    ByteBuffer h = ByteBuffer.wrap(first).order(ByteOrder.nativeOrder());
    if (h.getInt(0) != VERSION || first[12] != 1
        || !Arrays.equals(Arrays.copyOfRange(first, 32, 40), walSalts)) {
      return -1;
    }
    return Integer.toUnsignedLong(h.getInt(16));
  }
}
