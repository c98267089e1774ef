package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Since 35f43b71 no event id holds a NUL, so an operator's look-up of one (find, redrive, attempts)
 * can only answer "no such event", as it does on SQLite and as the JDBC journal answers such an
 * identity on PostgreSQL without asking the database (12b17a02). The inbox still binds it, and
 * PostgreSQL refuses the statement: the operator is told the inbox could not be read or written, a
 * database failure, for an id that cannot exist.
 */
@ExtendWith(PostgresExtension.class)
class ReviewPostgresOperatorNulTest {
  @Test
  void aLookUpOfAnIdWithANulAnswersNoSuchEventNotADatabaseFailure(PgDatabase db) {
    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).open()) {
      assertEquals(Optional.empty(), call(() -> inbox.find("stripe", "evt_a\u0000b")), "find");
      assertEquals(List.of(), call(() -> inbox.attempts("stripe", "evt_a\u0000b")), "attempts");
      assertFalse(call(() -> inbox.redrive("stripe", "evt_a\u0000b")), "redrive");
    }
  }

  private static <T> T call(java.util.function.Supplier<T> s) {
    try {
      return s.get();
    } catch (WebhookInboxException e) {
      org.junit.jupiter.api.Assertions.fail("a look-up of an id no event can have failed as a database failure: " + e.getMessage());
      return null;
    }
  }
}
