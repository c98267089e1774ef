package dev.idem.storage;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * One store's tables and their versioned migrations: the journal's, the guard's and the inbox's
 * each have one, so that the three can share a PostgreSQL database without sharing a version.
 *
 * <p>Migrations are SQL resources {@code <folder><dialect>/V<n>__<description>.sql}, listed in
 * order in {@code <folder><dialect>/index.txt}, loaded through {@code owner}'s class loader.
 *
 * @param what the store in messages and logs: "journal", "idempotency store", "webhook inbox"
 * @param owner a class of the module that holds the migration resources
 * @param folder the resource folder of the dialect folders, ending in {@code /}
 * @param versionTable the table recording which migrations ran
 * @param metaTable the embedded store's facts about itself (its id; {@link Meta}), created by the
 *     store's SQLite migrations
 * @param adoption the version of a database that holds the store's tables from before they were
 *     versioned
 */
public record Schema(String what, Class<?> owner, String folder, String versionTable, String metaTable,
    Adoption adoption) {

  /**
   * Says which migrations a database created before the store had versioned migrations (by
   * {@code CREATE TABLE IF NOT EXISTS} code) already holds, so that the migrator records them as
   * applied instead of running them again on tables that exist.
   */
  @FunctionalInterface
  public interface Adoption {
    /** Nothing to adopt: the store always had versioned migrations. */
    Adoption NONE = (c, d) -> 0;

    /**
     * Called once, when the version table is new.
     *
     * @param c the connection, in the migration's transaction
     * @param dialect the database's dialect
     * @return the latest migration the existing tables correspond to, or 0 if there are none
     * @throws SQLException if the database cannot be read
     */
    int adoptedVersion(Connection c, Dialect dialect) throws SQLException;
  }

  /** The resource folder of {@code dialect}'s migrations. */
  String migrationsFolder(Dialect dialect) {
    return folder + dialect.resourceDir() + "/";
  }
}
