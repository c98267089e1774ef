package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.jdkhttp.IdempotencyHttpFilter;
import dev.idem.server.servlet.IdempotencyFilter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Missing configuration fails with a message that names the setting and says what to give. */
class ConfigurationMessagesTest {
  @Test
  void aMissingStoreFileOrDataSourceIsNamedWithWhatToGive() {
    Path unset = null;  // as from Path.of(...) of a setting that was never read
    assertMessage(() -> JdbcIdempotencyStore.sqlite(unset), "database file", "Path.of(");
    assertMessage(() -> JdbcIdempotencyStore.sqlite(Path.of("x.db"), null), "busyTimeout", "Duration");
    assertMessage(() -> JdbcIdempotencyStore.postgres(null), "dataSource", "PostgreSQL");
  }

  @Test
  void theGuardsSettingsAreNamedWithWhatToGive() {
    assertMessage(() -> IdempotencyGuard.builder(null), "store", "JdbcIdempotencyStore.sqlite(");
    IdempotencyGuard.Builder b = IdempotencyGuard.builder(new InMemoryIdempotencyStore());
    assertMessage(() -> b.keyHeader(null), "keyHeader", "Idempotency-Key");
    assertMessage(() -> b.retention(null), "retention", "Duration");
    assertMessage(() -> b.lease(null), "lease", "Duration");
    assertMessage(() -> new RoutePolicy(true, null), "retention", "Duration");
    assertMessage(() -> new IdempotencyFilter(null), "guard", "IdempotencyGuard.builder(");
    assertMessage(() -> new IdempotencyHttpFilter(null), "guard", "IdempotencyGuard.builder(");
  }

  private static void assertMessage(Executable call, String setting, String whatToDo) {
    RuntimeException e = assertThrows(RuntimeException.class, call);
    String m = String.valueOf(e.getMessage());
    assertTrue(m.contains(setting) && m.contains(whatToDo), m);
  }
}
