package dev.idem.spring.boot;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link TransactionalKillTest}'s kills before and after the commit, with the app's DataSource,
 * the guard's records and the orders on PostgreSQL (a throwaway cluster; skipped loudly without
 * PostgreSQL's binaries, a failure under CI=true): one row per key either way.
 */
@ExtendWith(PostgresExtension.class)
class TransactionalKillPostgresTest {
  @Test
  void aKillBeforeOrAfterTheCommitLeavesOneEffectPerKeyOnPostgres(PgDatabase pg) throws Exception {
    Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "kill-test")), "pg-");
    try (Connection c = pg.dataSource().getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE orders (id SERIAL PRIMARY KEY, item TEXT NOT NULL)");
      st.execute("CREATE TABLE payments (id SERIAL PRIMARY KEY, amount TEXT NOT NULL)");
    }
    String url = "jdbc:postgresql://127.0.0.1:" + pg.cluster().port() + "/" + pg.name();
    TransactionalKillTest.killBeforeAndAfterTheCommit(dir,
        List.of("spring.datasource.url=" + url, "spring.datasource.username=postgres"),
        () -> pg.dataSource().getConnection());
  }
}
