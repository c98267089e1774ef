package dev.idem.spring.autoconfigure;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/**
 * Review rsecrets: with {@code idem.server.store=datasource} on a database that is neither
 * PostgreSQL nor a SQLite file (MySQL, MariaDB, SQL Server...), the startup fails with
 * "idem.server.store=datasource works on PostgreSQL and on a SQLite file; the app's DataSource is
 * " followed by the JDBC URL the connection reports ({@code Stores.url}:
 * {@code getMetaData().getURL()}). Drivers report the URL as configured, query string included
 * (MySQL Connector/J, pgjdbc), and {@code jdbc:mysql://db/app?user=app&password=...} is a
 * documented way to give the credentials: Boot prints that startup failure (APPLICATION FAILED TO
 * START, and the exception in the log), database password included. The connection here is a
 * stand-in that reports such a URL, as Connector/J's does.
 */
class RvRsecretsDataSourceUrlPasswordAtStartupTest {
  private static final String PASSWORD = "RvRsecretsMysqlPassw0rd";
  private static final String URL = "jdbc:mysql://db.internal:3306/app?user=app&password=" + PASSWORD;

  private static DataSource reportingUrl(String url) {
    DatabaseMetaData meta = (DatabaseMetaData) Proxy.newProxyInstance(RvRsecretsDataSourceUrlPasswordAtStartupTest.class
        .getClassLoader(), new Class<?>[] {DatabaseMetaData.class}, (p, m, a) -> switch (m.getName()) {
          case "getURL" -> url;
          case "getDatabaseProductName" -> "MySQL";
          default -> null;
        });
    Connection connection = (Connection) Proxy.newProxyInstance(RvRsecretsDataSourceUrlPasswordAtStartupTest.class
        .getClassLoader(), new Class<?>[] {Connection.class}, (p, m, a) -> switch (m.getName()) {
          case "getMetaData" -> meta;
          case "isClosed", "isReadOnly" -> false;
          default -> null;
        });
    return (DataSource) Proxy.newProxyInstance(RvRsecretsDataSourceUrlPasswordAtStartupTest.class.getClassLoader(),
        new Class<?>[] {DataSource.class}, (p, m, a) -> switch (m.getName()) {
          case "getConnection" -> connection;
          case "toString" -> "mysql stand-in";
          case "hashCode" -> 1;
          case "equals" -> p == a[0];
          default -> null;
        });
  }

  @Test
  void theStartupFailureForAnUnsupportedDatabaseDoesNotShowItsPassword(@TempDir Path dir) {
    new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemServerAutoConfiguration.class))
        .withPropertyValues("idem.client.enabled=false", "idem.outbox.enabled=false", "idem.directory=" + dir,
            "idem.server.routes=POST /orders", "idem.server.store=datasource")
        .withBean(DataSource.class, () -> reportingUrl(URL))
        .run(context -> {
          Throwable failure = context.getStartupFailure();
          assertNotNull(failure, "a MySQL DataSource is refused for idem.server.store=datasource");
          StringBuilder all = new StringBuilder();
          for (Throwable t = failure; t != null; t = t.getCause()) {
            all.append(t.getMessage()).append(" | ");
          }
          assertFalse(all.toString().contains(PASSWORD),
              "the startup failure shows the database password of the app's JDBC URL: " + all);
        });
  }
}
