package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A changing command holds an app's H2 database alone from its check to its end, as it holds an
 * app's SQLite file: an app started meanwhile is refused instead of running beside it (where the
 * command's crash recovery could have taken back the app's first claims).
 */
class ExclusiveH2DataSourceTest {
  @TempDir
  Path dir;

  @Test
  void anAppConnectingWhileTheCommandHoldsTheDatabaseIsRefusedUntilItEnds() throws Exception {
    JdbcDataSource app = new JdbcDataSource();
    app.setURL("jdbc:h2:file:" + dir.resolve("app"));
    JdbcDataSource cli = new JdbcDataSource();
    cli.setURL("jdbc:h2:file:" + dir.resolve("app") + ";IFEXISTS=TRUE");
    app.getConnection().close(); // the database exists

    try (Connection held = new ExclusiveH2DataSource(cli).getConnection()) {
      SQLException refused = assertThrows(SQLException.class, app::getConnection);
      assertEquals("90135", refused.getSQLState(), refused.toString());
    }
    app.getConnection().close(); // free again once the command's connection closed
  }

  @Test
  void aDatabaseAnotherSessionHasOpenIsNotHeld() throws Exception {
    JdbcDataSource app = new JdbcDataSource();
    app.setURL("jdbc:h2:file:" + dir.resolve("app"));
    try (Connection appConnection = app.getConnection()) {
      assertThrows(ExclusiveH2DataSource.OpenElsewhere.class, () -> new ExclusiveH2DataSource(app).getConnection());
      appConnection.createStatement().execute("SELECT 1"); // not held: the app's connection goes on
    }
  }
}
