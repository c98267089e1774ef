package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The webhook inbox refuses a non-UTF8 PostgreSQL database at open, as the journal does (StoreOpener). */
@ExtendWith(PostgresExtension.class)
class PostgresNonUtf8InboxTest {
  @Test
  void aLatin1DatabaseIsRefusedAtOpen(PgDatabase db) throws Exception {
    String latin1 = db.name() + "_latin1";
    try (Connection c = db.cluster().dataSource("postgres").getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + latin1 + " ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
    }
    WebhookInboxException refused = assertThrows(WebhookInboxException.class,
        () -> WebhookInbox.postgres(db.cluster().dataSource(latin1)).open());
    assertTrue(refused.getMessage().contains("has encoding LATIN1, not UTF8"), refused.getMessage());
  }
}
