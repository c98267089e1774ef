package dev.idem.spring.boot;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The app database the transactional-mode tests run against: a fresh directory holding
 * {@code app.db}, an SQLite file with the {@code orders} table their handlers write (one row per
 * effect, which the tests count).
 */
public final class AppDatabase {
  private AppDatabase() {
  }

  /**
   * A new directory (named from {@code prefix}) with {@code app.db} and its {@code orders} table.
   *
   * @param prefix the temporary directory's name prefix
   * @return the directory
   */
  public static Path withOrders(String prefix) {
    try {
      Path dir = Files.createTempDirectory(prefix);
      try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("app.db"));
           Statement st = c.createStatement()) {
        st.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL)");
      }
      return dir;
    } catch (Exception e) {
      throw new IllegalStateException("could not create the test's app database", e);
    }
  }

  /**
   * Points the app at {@code dir}: its DataSource at {@code app.db}, Idem's own files beside it.
   *
   * @param registry the test's dynamic properties
   * @param dir what {@link #withOrders} made
   */
  public static void register(DynamicPropertyRegistry registry, Path dir) {
    registry.add("idem.directory", () -> dir.resolve("idem").toString());
    registry.add("spring.datasource.url", () -> "jdbc:sqlite:" + dir.resolve("app.db"));
  }
}
