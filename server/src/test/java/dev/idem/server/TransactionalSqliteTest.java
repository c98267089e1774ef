package dev.idem.server;

import dev.idem.server.support.AppDb;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

class TransactionalSqliteTest extends TransactionalContract {
  @TempDir
  Path dir;

  @Override
  AppDb open() {
    return AppDb.sqlite(dir.resolve("app.db"));
  }
}
