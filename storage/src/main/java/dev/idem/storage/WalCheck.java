package dev.idem.storage;

import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Checks SQLite's {@code -wal} file before SQLite recovers from it, read-only. SQLite replays the
 * WAL up to its first frame with a bad checksum and silently ignores the rest, and ignores a WAL
 * whose header is damaged: right for a write a crash cut short, wrong for damage to commits it had
 * acknowledged. A journal that silently went back in time would send a finished operation again.
 * So this check refuses two shapes that a crash cannot leave behind:
 * <ul>
 *   <li>a non-empty WAL whose header is not a valid WAL header (SQLite syncs the header before the
 *       first frame, so a crash cannot leave a damaged one under frames);</li>
 *   <li>a frame that fails its checksum, or does not carry the WAL's salts (zeroed, or its header
 *       damaged) while a later frame does, followed by a commit frame and then by more frames of
 *       the same WAL generation (same salts). A crash can only spoil the transaction it interrupted,
 *       which is the last one (a commit is synced before the next transaction writes a frame:
 *       SQLite's {@code synchronous=FULL} syncs inside its commit; a store that syncs the file
 *       itself runs its next commit after that sync, and never spills an uncommitted page to the
 *       file, {@link StoreOpener}): frames of a later transaction after damage mean the damage hit
 *       a transaction that had committed.</li>
 * </ul>
 * And, after a kill, frames that SQLite's {@code -shm} index records as committed but that are no
 * longer intact ({@link WalIndex}): a file cut at a frame boundary, or damage to its last
 * transaction. Without that index (deleted, or older after a power loss), damage to the last
 * transaction alone looks exactly like a write cut short by a crash (or written back out of order),
 * and is not caught: that transaction is then lost as if it had never been committed.
 *
 * <p>The index is read only for a store that owns its files ({@link Layout#ownsFiles()}: the
 * journal, the inbox), never for one in a file the app's connections share (the guard's). Reading
 * it takes a descriptor of the {@code -shm} file, and closing that descriptor drops every POSIX lock
 * this process holds on the file, SQLite's WAL locks included: another process could then take
 * itself for the first connection and rebuild the index under this JVM's live mapping
 * (sqlite.org/howtocorrupt.html, 2.2). The app's connections in this JVM are invisible here and may
 * open the file at any moment, so for a shared file the frames alone are checked. A store that
 * owns its files reads the index while it holds their lock, before its own connection opens: no
 * writable store has them open, in this JVM or elsewhere, and none can open them while this store
 * holds that lock. A read-only store in this JVM may lose its lock on the index, but only a writer
 * rebuilds the index, and a read-only store elsewhere that then finds the lock free reads without
 * writing ({@code readonly_shm}). (An app's own connections on a store's private database file are
 * not supported: the directory is the store's.)
 *
 * <p>This reads the documented WAL format (sqlite.org/fileformat2.html, "The Write-Ahead Log") and
 * writes nothing; SQLite itself does all recovery.
 */
final class WalCheck {
  private static final int HEADER = 32;
  private static final int FRAME_HEADER = 24;
  private static final int MAGIC_LE = 0x377f0682;
  private static final int MAGIC_BE = 0x377f0683;

  private WalCheck() {
  }

  /** Refuses a damaged {@code -wal} file before SQLite silently drops what follows the damage. */
  static void refuseDamaged(String what, Layout layout) throws JournalException {
    Path wal = layout.wal();
    if (!Files.exists(wal)) {
      return;
    }
    String problem;
    try {
      problem = problem(wal, layout.ownsFiles() ? layout : null);
    } catch (IOException e) {
      throw new JournalException("cannot read the " + what + "'s write-ahead log " + wal + ": " + e, e);
    }
    if (problem != null) {
      throw StoreErrors.corrupt(what, layout.database(), "its write-ahead log " + wal.getFileName() + " is damaged: "
          + problem, null);
    }
  }

  /**
   * @param indexOf the store whose {@code -shm} index may be read (see above), or null
   * @return null if the WAL may be handed to SQLite, else what is wrong with it
   */
  private static String problem(Path wal, Layout indexOf) throws IOException {
    try (FileChannel ch = FileChannel.open(wal, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size == 0) {
        return null;
      }
      ByteBuffer header = read(ch, 0, HEADER);
      if (header == null) {
        return "its header is cut short (" + size + " bytes)";
      }
      int magic = header.getInt(0);
      if (magic != MAGIC_LE && magic != MAGIC_BE) {
        return "its header is not a SQLite WAL header";
      }
      boolean bigEndianWords = magic == MAGIC_BE;
      int pageSize = header.getInt(8);
      if (pageSize < 512 || pageSize > 65536 || Integer.bitCount(pageSize) != 1) {
        return "its header has an invalid page size";
      }
      int salt1 = header.getInt(16);
      int salt2 = header.getInt(20);
      int[] sum = checksum(header, 0, 24, bigEndianWords, 0, 0);
      if (sum[0] != header.getInt(24) || sum[1] != header.getInt(28)) {
        return "its header fails its checksum";
      }
      long frameSize = FRAME_HEADER + (long) pageSize;
      long damagedAt = -1;
      boolean commitAfterDamage = false;
      long intactFrames = 0;
      for (long at = HEADER; at + frameSize <= size; at += frameSize) {
        ByteBuffer frame = read(ch, at, (int) frameSize);
        if (frame == null) {
          break;
        }
        if (damagedAt < 0) {
          intactFrames = (at - HEADER) / frameSize;
        }
        if (frame.getInt(8) != salt1 || frame.getInt(12) != salt2) {
          if (damagedAt < 0) {
            if (!laterFrameOfGeneration(ch, at + frameSize, frameSize, size, salt1, salt2)) {
              break; // the end of this generation: older frames from before the WAL was restarted
            }
            // A generation is written front to back: a frame of it further on means this one was
            // overwritten (zeroed, or its salt damaged), not left over from an older generation.
            damagedAt = at;
            commitAfterDamage = frame.getInt(4) != 0;
          }
          continue;
        }
        boolean commitFrame = frame.getInt(4) != 0;
        if (damagedAt >= 0) {
          if (commitAfterDamage) {
            return "the frame at byte " + damagedAt + " is damaged, and transactions committed after it would be"
                + " silently dropped";
          }
          commitAfterDamage = commitFrame;
          continue;
        }
        int[] next = checksum(frame, 0, 8, bigEndianWords, sum[0], sum[1]);
        next = checksum(frame, FRAME_HEADER, pageSize, bigEndianWords, next[0], next[1]);
        if (next[0] != frame.getInt(16) || next[1] != frame.getInt(20)) {
          damagedAt = at;
          commitAfterDamage = commitFrame;
          continue;
        }
        sum = next;
        intactFrames = (at - HEADER) / frameSize + 1;
      }
      byte[] salts = new byte[8];
      header.get(16, salts);
      long committed = indexOf == null ? -1 : WalIndex.committedFrames(indexOf.shm(), salts);
      if (committed > intactFrames) {
        return "its -shm index says " + committed + " frames were committed, but only the first " + intactFrames
            + " are intact (the file was cut short or damaged after its commits were acknowledged)";
      }
      return null;
    }
  }

  /** True if a frame after {@code from} carries this generation's salts. */
  private static boolean laterFrameOfGeneration(FileChannel ch, long from, long frameSize, long size, int salt1,
      int salt2) throws IOException {
    for (long at = from; at + frameSize <= size; at += frameSize) {
      ByteBuffer salts = read(ch, at + 8, 8);
      if (salts != null && salts.getInt(0) == salt1 && salts.getInt(4) == salt2) {
        return true;
      }
    }
    return false;
  }

  private static ByteBuffer read(FileChannel ch, long position, int length) throws IOException {
    ByteBuffer b = ByteBuffer.allocate(length);
    while (b.hasRemaining()) {
      if (ch.read(b, position + b.position()) < 0) {
        return null;
      }
    }
    return b.flip().order(ByteOrder.BIG_ENDIAN);
  }

  /** SQLite's WAL checksum: pairs of 32-bit words, in the byte order the magic number names. */
  private static int[] checksum(ByteBuffer b, int offset, int length, boolean bigEndianWords, int s0, int s1) {
    ByteBuffer words = b.duplicate().order(bigEndianWords ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
    for (int i = offset; i < offset + length; i += 8) {
      s0 += words.getInt(i) + s1;
      s1 += words.getInt(i + 4) + s0;
    }
    return new int[] {s0, s1};
  }
}
