package dev.idem.storage;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Forces what a database has committed from the OS page cache to the disk, so that it survives an
 * OS crash or power loss, not only a process crash. One call covers every commit that returned
 * before it started. {@link SingleConnectionStore} calls it after each group commit, outside its
 * statement lock, so that the next group's statements run while the disk syncs.
 */
public interface DiskSync extends AutoCloseable {
  void sync() throws SQLException, IOException;

  @Override
  void close() throws SQLException, IOException;

  /**
   * An fdatasync of an embedded SQLite store's {@code -wal} file, for a connection in WAL mode with
   * {@code synchronous=NORMAL}. Such a commit appends its frames to the {@code -wal} file without
   * syncing; this sync then makes them durable, which is what {@code synchronous=FULL} does inside
   * the commit, while SQLite's write lock and the store's statement lock are held. SQLite keeps the
   * file (it restarts it from its start after a checkpoint, which syncs the database first) until
   * its last connection closes; the store's connection stays open for the store's life, and this
   * channel is closed before it. An interrupt of the syncing thread does not fail the sync: the
   * channel is opened again and the sync made again.
   *
   * @param wal the {@code -wal} file; created empty if SQLite has not made it yet, as SQLite would
   */
  static DiskSync ofWal(Path wal) throws IOException {
    return WalSync.open(wal);
  }

  /**
   * H2's {@code CHECKPOINT SYNC} on a second connection (so that it does not block the statements
   * of the next group): for an H2 DataSource given by the app, whose file the journal does not
   * know. It runs on a thread of its own: H2 clears an interrupt that reaches its file I/O, and the
   * syncing caller's interrupt is kept for it instead.
   */
  static DiskSync ofCheckpoint(Connection syncConnection) throws SQLException {
    return new CheckpointSync(syncConnection);
  }
}
