package dev.idem.spring.internal;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;

/** What kind of database an app's DataSource is, read once at startup from its JDBC URL. */
public final class Stores {
  private Stores() {}

  /** The app's DataSource, which {@code property}=datasource asks for. */
  public static DataSource required(ObjectProvider<DataSource> dataSource, String property) {
    DataSource ds = dataSource.getIfAvailable();
    if (ds == null) {
      throw new IllegalStateException(property + "=datasource, but the app has no DataSource bean");
    }
    return ds;
  }

  /** The JDBC URL of {@code dataSource}. */
  public static String url(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      return c.getMetaData().getURL();
    } catch (SQLException e) {
      throw new IllegalStateException("Idem could not read the app's DataSource: " + e.getMessage(), e);
    }
  }

  /** True for a PostgreSQL URL. */
  public static boolean isPostgres(String url) {
    return url != null && url.toLowerCase(Locale.ROOT).startsWith("jdbc:postgresql:");
  }

  /** The database file of a {@code jdbc:sqlite:} URL, or null for another URL or an in-memory database. */
  public static Path sqliteFile(String url) {
    if (url == null || !url.toLowerCase(Locale.ROOT).startsWith("jdbc:sqlite:")) {
      return null;
    }
    String rest = url.substring("jdbc:sqlite:".length());
    int q = rest.indexOf('?');
    if (q >= 0) {
      rest = rest.substring(0, q);
    }
    if (rest.startsWith("file:")) {
      rest = rest.substring("file:".length());
    }
    if (rest.isEmpty() || rest.equals(":memory:")) {
      return null;
    }
    return Path.of(rest);
  }
}
