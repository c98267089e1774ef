package dev.idem.jdbc.internal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Forces what H2 has written (with {@code WRITE_DELAY=0}, each commit writes its chunk to the file
 * before it returns) from the OS page cache to the disk, so that it survives an OS crash or power
 * loss, not only a process crash. One call covers every commit that returned before it started.
 */
public interface DiskSync extends AutoCloseable {
  void sync() throws SQLException, IOException;

  @Override
  void close() throws SQLException, IOException;

  /**
   * An fdatasync of the journal's own data file ({@link FileChannel#force force(false)}: the data
   * and the metadata needed to read it back, such as the file length, but not the modification
   * time). Used when the journal knows its file (it opened the directory itself). Unlike
   * {@code CHECKPOINT SYNC}, it does not first write another chunk of whatever later, uncommitted
   * units have changed, and it does not take H2's database lock.
   */
  static DiskSync ofFile(Path dataFile) throws IOException {
    FileChannel channel = FileChannel.open(dataFile, StandardOpenOption.READ);
    return new DiskSync() {
      @Override
      public void sync() throws IOException {
        channel.force(false);
      }

      @Override
      public void close() throws IOException {
        channel.close();
      }
    };
  }

  /**
   * H2's {@code CHECKPOINT SYNC} on a second connection (so that it does not block the statements
   * of the next group): for an H2 DataSource given by the app, whose file the journal does not
   * know.
   */
  static DiskSync ofCheckpoint(Connection syncConnection) throws SQLException {
    PreparedStatement checkpoint = syncConnection.prepareStatement("CHECKPOINT SYNC");
    return new DiskSync() {
      @Override
      public void sync() throws SQLException {
        checkpoint.execute();
      }

      @Override
      public void close() throws SQLException {
        try {
          checkpoint.close();
        } finally {
          syncConnection.close();
        }
      }
    };
  }
}
