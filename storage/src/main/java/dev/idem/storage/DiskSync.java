package dev.idem.storage;

import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Forces what an app's H2 database has committed from the OS page cache to the disk, so that it
 * survives an OS crash or power loss, not only a process crash. One call covers every commit that
 * returned before it started. SQLite needs none: with {@code synchronous=FULL} its commit syncs.
 */
public interface DiskSync extends AutoCloseable {
  void sync() throws SQLException, IOException;

  @Override
  void close() throws SQLException, IOException;

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
