package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link WebhookInbox#list(InboxState, int)} and the new {@code list(state, after, limit)} refuse a
 * limit below 1 with {@link IllegalArgumentException}; {@link WebhookInbox#deadLetters(int)}, the
 * same listing for DEAD ("the most to return"), passes it to SQL unchecked: on SQLite
 * {@code LIMIT -1} means no limit, so {@code deadLetters(-1)} reads every dead letter into one list
 * (the unbounded read the paging of 38308bc exists to avoid), and {@code deadLetters(0)} returns
 * none; on PostgreSQL a negative limit fails as a {@link WebhookInboxException} ("could not read
 * the webhook inbox"), as if the store were broken.
 *
 * <p>Review of 2026-12-05 (sess23).
 */
class DeadLettersLimitTest {
  @TempDir
  Path dir;

  @Test
  void deadLettersRefusesALimitBelowOneAsListDoes() {
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      assertThrows(IllegalArgumentException.class, () -> inbox.list(InboxState.DEAD, -1));
      assertAll(
          () -> assertThrows(IllegalArgumentException.class, () -> inbox.deadLetters(-1),
              "deadLetters(-1): SQLite reads it as no limit at all"),
          () -> assertThrows(IllegalArgumentException.class, () -> inbox.deadLetters(0), "deadLetters(0)"));
    }
  }
}
