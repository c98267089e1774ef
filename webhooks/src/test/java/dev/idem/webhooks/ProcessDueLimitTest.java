package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link WebhookProcessor#processDue(int)} with a negative {@code max} on the embedded inbox: the
 * claim now merges its two ranges in Java and cuts the merge with {@code subList(0, min(max, n))},
 * so {@code processDue(-1)} fails with the JDK's {@code fromIndex(0) > toIndex(-1)}, a message about
 * a list the caller never saw (before, SQLite read {@code LIMIT -1} as no limit and ran every due
 * event; PostgreSQL refuses a negative LIMIT as a store failure). A bad argument should be named as
 * one, as {@link WebhookInbox#list} does for its limit, and leave the inbox as it was, on either
 * database; {@code max} 0, which asks to run nothing, is refused the same way, as {@code list}
 * refuses a limit of 0.
 */
class ProcessDueLimitTest {
  @TempDir
  Path dir;

  @Test
  void processDueNamesANegativeMaxInsteadOfFailingInsideTheClaim() {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      assertRefused(inbox, time, -1);
      assertRefused(inbox, time, 0);
    }
  }

  @Test
  @ExtendWith(PostgresExtension.class)
  void onPostgresqlToo(PgDatabase db) {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).clock(time.clock()).open()) {
      assertRefused(inbox, time, -1);
      assertRefused(inbox, time, 0);
    }
  }

  /** processDue(max) on an inbox with two due events throws, naming max, and claims neither. */
  private static void assertRefused(WebhookInbox inbox, VirtualTime time, int max) {
    AtomicInteger handled = new AtomicInteger();
    long now = time.clock().millis();
    for (int i = 0; i < 2; i++) {
      inbox.store().insert("acme", "evt_" + i, "order.paid", new byte[] {(byte) i}, List.of(), false,
          "{}".getBytes(StandardCharsets.UTF_8), null, now - 10 + i);
    }
    try (WebhookProcessor p = WebhookProcessor.builder(inbox).clock(time.clock())
        .handler("order.paid", e -> handled.incrementAndGet()).build()) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> p.processDue(max));
      assertAll(
          () -> assertTrue(e.getMessage() != null && e.getMessage().contains("max"),
              "processDue(" + max + ") fails with a message that names its argument, not: " + e.getMessage()),
          () -> assertEquals(0, handled.get(), "no handler ran"),
          () -> assertEquals(2L, inbox.counts().get(InboxState.PENDING), "both events still PENDING"),
          () -> assertEquals(0L, inbox.counts().get(InboxState.PROCESSING), "none claimed"));
    }
  }
}
