package dev.idem.server.support;

import dev.idem.server.JdbcIdempotencyStore;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;
import org.sqlite.SQLiteDataSource;

/**
 * The app's own database for transactional-mode tests: its connections, the guard's store on the
 * same database, and the app's table of effects ({@code orders}, one row per effect, with no
 * unique constraint, so a double effect shows as two rows).
 */
public final class AppDb {
  private final DataSource dataSource;
  private final Path sqliteFile;

  private AppDb(DataSource dataSource, Path sqliteFile) {
    this.dataSource = dataSource;
    this.sqliteFile = sqliteFile;
  }

  /** An embedded database file; app connections wait up to 20 s for SQLite's write lock. */
  public static AppDb sqlite(Path file) {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + file.toAbsolutePath());
    ds.setBusyTimeout(20_000);
    ds.setSynchronous("FULL");
    return new AppDb(ds, file);
  }

  public static AppDb postgres(PGSimpleDataSource ds) {
    return new AppDb(ds, null);
  }

  /** The child JVMs' way in: {@code sqlite <file>} or {@code postgres <port> <database>}. */
  public static AppDb fromArgs(String[] args, int from) {
    if (args[from].equals("sqlite")) {
      return sqlite(Path.of(args[from + 1]));
    }
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setServerNames(new String[] {"127.0.0.1"});
    ds.setPortNumbers(new int[] {Integer.parseInt(args[from + 1])});
    ds.setDatabaseName(args[from + 2]);
    ds.setUser("postgres");
    return postgres(ds);
  }

  /** How many arguments {@link #fromArgs} read. */
  public static int argCount(String[] args, int from) {
    return args[from].equals("sqlite") ? 2 : 3;
  }

  public boolean isSqlite() {
    return sqliteFile != null;
  }

  public DataSource dataSource() {
    return dataSource;
  }

  /** The guard's store on this database (creates its table). */
  public JdbcIdempotencyStore openStore() {
    return sqliteFile != null ? JdbcIdempotencyStore.sqlite(sqliteFile) : JdbcIdempotencyStore.postgres(dataSource);
  }

  public void createOrders() throws SQLException {
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS orders (op TEXT NOT NULL, item TEXT NOT NULL)");
    }
  }

  /** The app's effect: one order row, in the caller's transaction. */
  public static void insertOrder(Connection c, String op, String item) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO orders (op, item) VALUES (?, ?)")) {
      ps.setString(1, op);
      ps.setString(2, item);
      ps.executeUpdate();
    }
  }

  /** Committed effects of one operation. */
  public int orders(String op) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM orders WHERE op = ?")) {
      ps.setString(1, op);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** Committed guard records, any state. */
  public int records() throws SQLException {
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM idem_server_record")) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
