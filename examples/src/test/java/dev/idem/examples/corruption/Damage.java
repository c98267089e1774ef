package dev.idem.examples.corruption;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One kind of damage to a store's files, at one position: the database file truncated, flipped or
 * zeroed; the {@code -wal} deleted, cut at a frame, or one frame's page, salt or whole frame
 * damaged; the {@code -shm} deleted or zeroed.
 *
 * @param kind what is done
 * @param position the byte, page or frame it is done at (ignored by kinds without one)
 */
record Damage(Kind kind, long position) {
  enum Kind {
    DB_DELETE(false), DB_TRUNCATE_HALF(false), DB_TRUNCATE_PAGE(false), DB_FLIP(false), DB_ZERO_PAGE(false),
    WAL_DELETE(true), WAL_CUT_AT_FRAME(true), WAL_FLIP_FRAME(true), WAL_ZERO_FRAME(true), WAL_SALT_FRAME(true),
    SHM_DELETE(true), SHM_ZERO(true);

    /** True if it needs the -wal and -shm files a killed store leaves. */
    final boolean killedOnly;

    Kind(boolean killedOnly) {
      this.killedOnly = killedOnly;
    }

    boolean framed() {
      return this == WAL_CUT_AT_FRAME || this == WAL_FLIP_FRAME || this == WAL_ZERO_FRAME || this == WAL_SALT_FRAME;
    }
  }

  static final int PAGE = 4096;
  static final int WAL_HEADER = 32;
  static final int FRAME = 24 + PAGE;

  /** Applies the damage to the store whose database file is {@code db}. */
  void apply(Path db) throws Exception {
    Path wal = db.resolveSibling(db.getFileName() + "-wal");
    Path shm = db.resolveSibling(db.getFileName() + "-shm");
    switch (kind) {
      case DB_DELETE -> Files.delete(db);
      case DB_TRUNCATE_HALF -> truncate(db, Files.size(db) / 2);
      case DB_TRUNCATE_PAGE -> truncate(db, Math.max(0, Files.size(db) - PAGE));
      case DB_FLIP -> flip(db, position, 0x5a);
      case DB_ZERO_PAGE -> write(db, position * PAGE, new byte[PAGE]);
      case WAL_DELETE -> Files.delete(wal);
      case WAL_CUT_AT_FRAME -> truncate(wal, WAL_HEADER + position * FRAME);
      case WAL_FLIP_FRAME -> flip(wal, WAL_HEADER + position * FRAME + 24 + 100 + position % 1000, 0x5a);
      case WAL_ZERO_FRAME -> write(wal, WAL_HEADER + position * FRAME, new byte[FRAME]);
      case WAL_SALT_FRAME -> flip(wal, WAL_HEADER + position * FRAME + 8 + position % 8, 1 << (position % 8));
      case SHM_DELETE -> Files.delete(shm);
      case SHM_ZERO -> write(shm, 0, new byte[(int) Files.size(shm)]);
    }
  }

  /** Frames of the WAL's current generation, and which of them commit: index of the last one's first frame. */
  static int[] frames(Path wal) throws Exception {
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(wal));
    if (b.capacity() < WAL_HEADER) {
      return new int[] {0, 0, 0};
    }
    int salt1 = b.getInt(16);
    int salt2 = b.getInt(20);
    int count = 0;
    int lastCommit = -1;
    int previousCommit = -1;
    for (int at = WAL_HEADER; at + FRAME <= b.capacity(); at += FRAME, count++) {
      if (b.getInt(at + 8) != salt1 || b.getInt(at + 12) != salt2) {
        break;
      }
      if (b.getInt(at + 4) != 0) {
        previousCommit = lastCommit;
        lastCommit = count;
      }
    }
    // {frames, first frame of the last committed transaction, frame that commits the one before}
    return new int[] {count, previousCommit + 1, previousCommit};
  }

  @Override
  public String toString() {
    return kind + (kind == Kind.DB_FLIP || kind == Kind.DB_ZERO_PAGE || kind.framed() ? "@" + position : "");
  }

  private static void truncate(Path file, long size) throws Exception {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.setLength(size);
    }
  }

  private static void flip(Path file, long at, int mask) throws Exception {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      if (at >= f.length()) {
        return;
      }
      f.seek(at);
      int b = f.read();
      f.seek(at);
      f.write(b ^ mask);
    }
  }

  private static void write(Path file, long at, byte[] bytes) throws Exception {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      if (at >= f.length()) {
        return;
      }
      f.seek(at);
      f.write(bytes, 0, (int) Math.min(bytes.length, f.length() - at));
    }
  }
}
