package dev.idem.storage;

import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import javax.sql.DataSource;

/**
 * How many bytes a store takes on disk, for the {@code idem.storage.size} gauge
 * ({@link StorageSizeGauge}): a SQLite database file and its {@code -wal} file, an H2 database file,
 * or PostgreSQL's {@code pg_total_relation_size} (rows, indexes and TOAST) of the store's tables.
 * Files are measured when asked, without touching the store's connection; PostgreSQL is asked on a
 * connection of the DataSource. Thread-safe.
 */
@FunctionalInterface
public interface StorageSize {
  /** A store whose size cannot be measured (an in-memory database, or one opened to be read only). */
  StorageSize UNKNOWN = () -> -1;

  /**
   * @return the bytes, or -1 if this store's size cannot be measured
   * @throws IdempotencyException if the files or the database cannot be read
   */
  long bytes() throws IdempotencyException;

  /** The sum of the sizes of {@code files}; a missing one (a {@code -wal} file after a clean close) counts 0. */
  static StorageSize ofFiles(Path... files) {
    return () -> {
      long total = 0;
      for (Path f : files) {
        try {
          total += Files.size(f);
        } catch (NoSuchFileException absent) {
          // nothing on the disk
        } catch (IOException e) {
          throw new JournalException("cannot read the size of " + f + ": " + e, e);
        }
      }
      return total;
    };
  }

  /**
   * PostgreSQL: the total size of {@code tables} in the DataSource's search path; a table not
   * created yet counts 0.
   *
   * @param what the store in messages ({@link Schema#what()})
   * @param name the database in messages
   */
  static StorageSize ofTables(String what, String name, DataSource dataSource, List<String> tables) {
    return () -> {
      try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
          "SELECT COALESCE(SUM(pg_total_relation_size(to_regclass(t))), 0) FROM unnest(?::text[]) AS t")) {
        ps.setArray(1, c.createArrayOf("text", tables.toArray()));
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      } catch (SQLException e) {
        throw StoreErrors.wrap(what, "size query on " + name, e);
      }
    };
  }
}
