package dev.idem.jdbc;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the frames of a SQLite {@code -wal} file are, and which of them end a transaction (a
 * non-zero "database size" field), read from the documented format: a 32-byte header, then frames
 * of a 24-byte header and one page each. Only the current generation's frames (the header's salts)
 * count. For tests that damage chosen frames.
 */
record WalFrames(int pageSize, List<Boolean> commits) {
  static final int HEADER = 32;
  static final int FRAME_HEADER = 24;

  static WalFrames of(Path wal) throws Exception {
    ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(wal));
    int pageSize = b.getInt(8);
    int salt1 = b.getInt(16);
    int salt2 = b.getInt(20);
    List<Boolean> commits = new ArrayList<>();
    for (int at = HEADER; at + FRAME_HEADER + pageSize <= b.capacity(); at += FRAME_HEADER + pageSize) {
      if (b.getInt(at + 8) != salt1 || b.getInt(at + 12) != salt2) {
        break;
      }
      commits.add(b.getInt(at + 4) != 0);
    }
    return new WalFrames(pageSize, List.copyOf(commits));
  }

  int frameSize() {
    return FRAME_HEADER + pageSize;
  }

  long offset(int frame) {
    return HEADER + (long) frame * frameSize();
  }

  /** The index of the last committed transaction's first frame (0 if there is one transaction). */
  int lastTransactionStart() {
    int lastCommit = commits.lastIndexOf(true);
    for (int i = lastCommit - 1; i >= 0; i--) {
      if (commits.get(i)) {
        return i + 1;
      }
    }
    return 0;
  }

  @Override
  public String toString() {
    return commits.size() + " frames of " + pageSize + " bytes, " + commits.stream().filter(c -> c).count()
        + " commits";
  }
}
