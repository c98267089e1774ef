package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Review rsecrets: a PostgreSQL journal names itself by the JDBC URL its DataSource's connection
 * reports ({@code StoreOpener.openDataSource}: {@code name = c.getMetaData().getURL()}), and
 * pgjdbc reports the URL exactly as the pool handed it to the driver, query string included. A URL
 * that carries the password ({@code jdbc:postgresql://db/app?user=app&password=...}, the form
 * pgjdbc documents, and the one Idem's own CLI tells users to write; Hikari's {@code jdbcUrl} of a
 * Boot app set from one {@code DATABASE_URL}-style variable) then puts the database password in
 * {@code JdbcJournal.toString()} and in the message of every {@code JournalException} the store
 * raises with its name: "connection to NAME", "read on NAME", "write on NAME" (every outage of the
 * database), "... NAME is closed". Apps log these messages; the CLI blanks such a password
 * ({@code JournalOptions}), the library does not.
 */
@ExtendWith(PostgresExtension.class)
class RvRsecretsPostgresUrlPasswordInMessagesTest {
  private static final String PASSWORD = "RvRsecretsDbPassw0rd";

  /** As Hikari's DriverDataSource is: every connection from DriverManager with the configured jdbcUrl. */
  private record UrlDataSource(String url) implements DataSource {
    @Override
    public Connection getConnection() throws SQLException {
      return DriverManager.getConnection(url);
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() {
      return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {}

    @Override
    public int getLoginTimeout() {
      return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
      return false;
    }
  }

  @Test
  void theDatabasePasswordInTheUrlIsInNoMessageNorToString(PgDatabase db) throws Exception {
    String url = "jdbc:postgresql://127.0.0.1:" + db.cluster().port() + "/" + db.name()
        + "?user=postgres&password=" + PASSWORD;
    JdbcJournal journal = JdbcJournal.dataSource(new UrlDataSource(url)).open();
    String shown = journal.toString();
    journal.close();
    Exception closed = assertThrows(Exception.class,
        () -> journal.find(new OperationId("s", "op", IdempotencyKey.of("k-1"))));
    String message = closed.getMessage();
    assertFalse(shown.contains(PASSWORD) || String.valueOf(message).contains(PASSWORD),
        "the database password from the JDBC URL is shown: toString() = " + shown + "; after close: " + message);
  }
}
