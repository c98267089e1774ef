package dev.idem.storage;

import dev.idem.core.IdempotencyException;
import dev.idem.core.JournalException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a store's schema ({@link Schema}) up to date on open. Migrations are SQL resources named
 * {@code V<n>__<description>.sql} in the dialect's folder, listed in order in its {@code index.txt};
 * the schema's version table records which ran (by version number: no checksum of a script is
 * kept, so a script that already ran is never read again). Only forward migrations exist; a
 * journal whose schema is newer than this code refuses to open rather than misread it, and so does
 * one whose version table lacks a version below its highest (a row deleted or lost): whether that
 * migration ran cannot be told, and running it again out of order is not safe.
 *
 * <p>A migration runs again, from its first statement, on the open after a process was killed
 * during it. Where DDL is transactional (SQLite, PostgreSQL) nothing of it was kept, but H2 commits
 * each DDL statement on its own (and with it the version rows recorded before it): a kill leaves a
 * prefix of the migration's statements applied and its version unrecorded. Every statement of an
 * H2 migration is therefore idempotent ({@code CREATE TABLE IF NOT EXISTS},
 * {@code CREATE INDEX IF NOT EXISTS}, {@code ADD COLUMN IF NOT EXISTS}, {@code DROP ... IF EXISTS}),
 * so that running it again completes it; a non-idempotent one would fail on what the killed run
 * left, on every open after.
 */
public final class Migrator {
  private static final Logger LOG = LoggerFactory.getLogger(Migrator.class);
  private static final Pattern NAME = Pattern.compile("V(\\d+)__([A-Za-z0-9_]+)\\.sql");
  private static final Pattern CREATE_TABLE = Pattern.compile("CREATE TABLE (?:IF NOT EXISTS )?(\\w+)",
      Pattern.CASE_INSENSITIVE);

  /** One migration resource. */
  record Migration(int version, String description, String resource) {
  }

  private final Dialect dialect;
  private final Schema schema;
  private final Clock clock;

  /**
   * @param dialect the database's
   * @param schema the store's tables and migrations
   * @param clock for the times the version table records
   */
  public Migrator(Dialect dialect, Schema schema, Clock clock) {
    this.dialect = dialect;
    this.schema = schema;
    this.clock = clock;
  }

  /**
   * Applies every migration newer than the journal's version, in one transaction (where the
   * database has transactional DDL; H2 commits each DDL statement, which is why its migrations are
   * idempotent: see the class documentation). Runs before the journal opens for business, on a
   * connection of its own.
   *
   * @return the schema version after migrating
   */
  public int migrate(Connection c) throws IdempotencyException {
    List<Migration> all = migrations();
    try {
      // At READ COMMITTED whatever the connection's default: the version read after the advisory
      // lock must see what the migration that held it committed (Dialect#transactionStartSql).
      return DataSourceStore.inTransaction(c, dialect.transactionStartSql(null),
          session -> migrateInTransaction(c, all));
    } catch (SQLException e) {
      throw StoreErrors.wrap(schema.what(), "schema migration", e);
    }
  }

  private int migrateInTransaction(Connection c, List<Migration> all) throws SQLException, IdempotencyException {
    if (dialect == Dialect.POSTGRESQL && versionTableExists(c)) {
      // A schema already current needs no DDL and no lock: a least-privilege role (SELECT, INSERT,
      // UPDATE and DELETE only, no CREATE on the schema, PostgreSQL 15's default) opens it. The
      // CREATE TABLE IF NOT EXISTS below would need CREATE on the schema even for a table that
      // exists (PostgreSQL checks the privilege first). A version read here that is behind (or a
      // table another open is creating right now) takes the locked path below, which reads again.
      int current = currentVersion(c, all);
      if (current > all.size()) {
        throw newer(current, all.size());
      }
      if (current == all.size()) {
        return current;
      }
    }
    String lock = dialect.migrationLockSql();
    try (Statement st = c.createStatement()) {
      if (lock != null) {
        st.execute(lock);
      }
      st.execute("CREATE TABLE IF NOT EXISTS " + schema.versionTable() + " (version INT PRIMARY KEY,"
          + " description VARCHAR(200) NOT NULL, applied_at BIGINT NOT NULL)");
    }
    int current = currentVersion(c, all);
    if (current == 0) {
      current = adopt(c, all);
    }
    if (current > all.size()) {
      throw newer(current, all.size());
    }
    for (Migration m : all.subList(current, all.size())) {
      apply(c, m);
    }
    return all.size();
  }

  /**
   * Whether the version table is visible on the connection's search path (PostgreSQL's
   * {@code to_regclass}, which reads the catalog and needs no privilege on the table).
   */
  private boolean versionTableExists(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
      ps.setString(1, schema.versionTable());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getBoolean(1);
      }
    }
  }

  /**
   * The schema version of a journal opened read-only, which is never migrated.
   *
   * @throws JournalException if the database is not a journal, or its schema is older than this
   *     code (then the app, which migrates on open, must open it first) or newer (then this code,
   *     such as the CLI, must be upgraded)
   */
  public int currentVersionReadOnly(Connection c) throws IdempotencyException {
    List<Migration> all = migrations();
    int latest = all.size(); // the newest version this code knows: they are numbered 1, 2, 3...
    int current;
    try {
      current = currentVersion(c, all);
    } catch (SQLException e) {
      throw new JournalException("the database is not an Idem " + schema.what() + " (it has no readable "
          + schema.versionTable() + " table)", e);
    }
    if (current > latest) {
      // Opening it with this version cannot help: no Idem migrates a schema down.
      throw newer(current, latest);
    }
    if (current < latest) {
      throw new JournalException("the " + schema.what() + " schema is at version " + current + ", older than the"
          + " version " + latest + " this Idem reads; open the " + schema.what() + " once with this Idem version"
          + " (which migrates it) or use the matching tool version", null);
    }
    return current;
  }

  /**
   * The refusal of a schema that a newer Idem migrated, in the same words for the app's open and
   * for a read-only tool (the CLI): what to upgrade is this code, never the store.
   */
  private JournalException newer(int current, int latest) {
    return new JournalException("the " + schema.what() + " schema is at version " + current
        + ", newer than this Idem version supports (" + latest + "); upgrade Idem to open it (the app's Idem"
        + " library, or the Idem CLI if that is what opened it); no Idem migrates a schema down", null);
  }

  /**
   * Records as applied the migrations that a database from before versioned migrations already
   * holds ({@link Schema#adoption()}), so that they do not run again on tables that exist.
   */
  private int adopt(Connection c, List<Migration> all) throws SQLException, JournalException {
    int adopted = schema.adoption().adoptedVersion(c, dialect);
    if (adopted > all.size()) {
      throw new JournalException("the " + schema.what() + "'s adoption names version " + adopted + ", beyond the "
          + all.size() + " migrations this Idem has", null);
    }
    for (Migration m : all.subList(0, adopted)) {
      record(c, m);
    }
    if (adopted > 0) {
      LOG.info("Idem {} schema: adopted tables created before versioned migrations, as version {}", schema.what(),
          adopted);
    }
    return adopted;
  }

  /**
   * The highest version the version table records, after checking that it records every version
   * below it too. A row missing below the highest (deleted by hand, lost in a partial restore) would
   * otherwise pass unseen: whether that migration's changes are in the database cannot be told from
   * the table, and running it again is not safe either. The SQLite and PostgreSQL scripts are not
   * idempotent (only H2's are, see the class documentation), and an older script run after a newer
   * one can undo it (SQLite's V4 and V5 each replace the index of the one before).
   *
   * @return the highest version recorded, 0 for none; one beyond {@code all} (a newer Idem's) unchecked
   * @throws JournalException if a version between 1 and the highest is not recorded
   */
  private int currentVersion(Connection c, List<Migration> all) throws SQLException, JournalException {
    SortedSet<Integer> recorded = new TreeSet<>();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT version FROM " + schema.versionTable())) {
      while (rs.next()) {
        recorded.add(rs.getInt(1));
      }
    }
    int highest = recorded.isEmpty() ? 0 : recorded.last();
    if (highest > all.size()) {
      return highest; // a newer Idem's schema: refused as such by the callers, whose advice (upgrade) comes first
    }
    List<Integer> missing = new ArrayList<>();
    for (int v = 1; v < highest; v++) {
      if (!recorded.contains(v)) {
        missing.add(v);
      }
    }
    if (!missing.isEmpty()) {
      throw gap(recorded, missing, all);
    }
    return highest;
  }

  private JournalException gap(SortedSet<Integer> recorded, List<Integer> missing, List<Migration> all) {
    String table = schema.versionTable();
    StringBuilder names = new StringBuilder();
    for (int v : missing) {
      names.append(names.isEmpty() ? "" : ", ").append("version ").append(v).append(" (")
          .append(all.get(v - 1).resource()).append(')');
    }
    Migration first = all.get(missing.get(0) - 1);
    String reinsert = "; for " + first.resource() + ": INSERT INTO " + table
        + " (version, description, applied_at) VALUES (" + first.version() + ", '"
        + first.description().replace('_', ' ') + "', 0)";
    return new JournalException("the " + schema.what() + " schema's version table " + table + " records "
        + recorded.stream().map(String::valueOf).collect(Collectors.joining(", ")) + " but not " + names
        + ": a row was deleted or lost (by hand, or in a partial restore), so Idem cannot tell whether that"
        + " migration ran, and does not run it again out of order (a migration is not safe to repeat, and an"
        + " older one may undo a newer one). Restore " + table + " from a backup; or, once you have checked that"
        + " the database holds what the migration creates (its script is in the Idem jar under "
        + schema.migrationsFolder(dialect) + "), insert its row again" + reinsert, null);
  }

  private void apply(Connection c, Migration m) throws SQLException, JournalException {
    String sql = resource(m.resource());
    try (Statement st = c.createStatement()) {
      for (String statement : splitStatements(sql)) {
        st.execute(statement);
      }
    }
    record(c, m);
    LOG.info("Idem {} schema migrated to version {} ({})", schema.what(), m.version(), m.description());
  }

  private void record(Connection c, Migration m) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO " + schema.versionTable() + " (version, description, applied_at) VALUES (?, ?, ?)")) {
      ps.setInt(1, m.version());
      ps.setString(2, m.description().replace('_', ' '));
      java.time.Instant now = clock.instant();
      ps.setLong(3, now.getEpochSecond() * 1_000_000_000L + now.getNano());
      ps.executeUpdate();
    }
  }

  /** The tables the store keeps: its version table and every table its migrations create. */
  List<String> tables() throws JournalException {
    List<String> tables = new ArrayList<>(List.of(schema.versionTable()));
    for (Migration m : migrations()) {
      Matcher created = CREATE_TABLE.matcher(String.join("\n", splitStatements(resource(m.resource()))));
      while (created.find()) {
        tables.add(created.group(1).toLowerCase(Locale.ROOT));
      }
    }
    return tables;
  }

  List<Migration> migrations() throws JournalException {
    List<Migration> result = new ArrayList<>();
    int expected = 1;
    for (String line : resource("index.txt").split("\n")) {
      String name = line.strip();
      if (name.isEmpty() || name.startsWith("#")) {
        continue;
      }
      Matcher m = NAME.matcher(name);
      if (!m.matches() || Integer.parseInt(m.group(1)) != expected) {
        throw new JournalException("bad migration list entry '" + name + "' in " + schema.migrationsFolder(dialect)
            + "index.txt (expected V" + expected + "__<description>.sql)", null);
      }
      result.add(new Migration(expected, m.group(2), name));
      expected++;
    }
    return result;
  }

  private String resource(String name) throws JournalException {
    String path = schema.migrationsFolder(dialect) + name;
    try (InputStream in = schema.owner().getClassLoader().getResourceAsStream(path)) {
      if (in == null) {
        throw new JournalException("migration resource missing from the classpath: " + path, null);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new JournalException("cannot read migration resource " + path, e);
    }
  }

  /** Splits a script at semicolons that end a line; drops {@code --} comment lines. */
  static List<String> splitStatements(String script) {
    List<String> statements = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String line : script.split("\n")) {
      String trimmed = line.strip();
      if (trimmed.isEmpty() || trimmed.startsWith("--")) {
        continue;
      }
      current.append(line).append('\n');
      if (trimmed.endsWith(";")) {
        String s = current.toString().strip();
        statements.add(s.substring(0, s.length() - 1));
        current.setLength(0);
      }
    }
    if (!current.toString().isBlank()) {
      statements.add(current.toString().strip());
    }
    return statements;
  }
}
