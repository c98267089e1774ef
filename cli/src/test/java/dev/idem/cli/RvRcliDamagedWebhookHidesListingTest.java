package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.PermanentWebhookException;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookProcessor;
import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One damaged webhook event (its stored payload no longer matches its SHA-256 checksum: a byte
 * changed on disk) makes {@code idem webhooks dead-letters} useless: the command ends with status 1
 * and lists none of the healthy dead letters. The processor makes such an event a dead letter on
 * purpose (docs/webhooks.md, "Stored payloads carry a checksum": "the processor makes it a dead
 * letter saying why"), so the very command an operator runs to see dead letters is the one it
 * breaks, for good: a re-drive makes it DEAD again, and the CLI has no command to remove it.
 *
 * <p>The cause: {@code WebhooksCommand.Listing#list} reads pages with {@code WebhookInbox#list},
 * which throws {@code WebhookInboxException} for the first row that fails its checksum
 * ({@code InboxStore#requireIntact} inside {@code InboxStore#entries}); the listing has no way to
 * skip and count it. The journal's listings skip and count a damaged row ("cannot be read
 * (damaged rows)") and {@code guard list} names an unreadable record and lists the rest (docs/cli.md,
 * "Damaged rows": it "does not hide the others either"); the webhook listings should do the same.
 * The same holds for {@code webhooks list --state done} after a byte of a handled event changes.
 */
class RvRcliDamagedWebhookHidesListingTest {
  // Not the all-zero key: HMAC pads a key with zeros, so that one is the empty key, and refused.
  private static final String SECRET = "whsec_aWRlbS10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm";

  @TempDir
  Path dir;

  @Test
  void oneDamagedDeadLetterDoesNotHideTheOtherDeadLetters() throws Exception {
    Path inboxDir = dir.resolve("inbox");
    try (WebhookInbox inbox = WebhookInbox.sqlite(inboxDir).open()) {
      WebhookReceiver receiver = WebhookReceiver.builder(
          WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET).build(), inbox).build();
      for (String id : List.of("evt_healthy", "evt_damaged")) {
        Map<String, List<String>> headers = new TreeMap<>();
        byte[] body = WebhookSigner.jsonEvent(id, "order.paid", "{}");
        WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, id, "order.paid", Instant.now(), body).headers()
            .forEach((k, v) -> headers.put(k, List.of(v)));
        assertEquals(200, receiver.handle("POST", headers, body).status());
      }
    }
    // A byte of one stored payload changes on disk (a well-formed page: SQLite's check cannot see it).
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + inboxDir.resolve("inbox.db"));
        Statement s = c.createStatement()) {
      assertEquals(1, s.executeUpdate("UPDATE idem_webhook_inbox SET body = CAST('{\"x\":1}' AS BLOB)"
          + " WHERE event_id = 'evt_damaged'"));
    }
    // The app's processor: the healthy event's handler refuses it for good, the damaged one is made a
    // dead letter by the processor itself, never handed to the handler.
    try (WebhookInbox inbox = WebhookInbox.sqlite(inboxDir).open()) {
      WebhookProcessor.builder(inbox).handler("order.paid", e -> {
        throw new PermanentWebhookException("unknown order");
      }).build().processDue(10);
      assertEquals(2L, inbox.counts().get(InboxState.DEAD), "both are dead letters: " + inbox.counts());
    }

    CliRun deadLetters = CliRun.of("webhooks", "dead-letters", "--inbox", inboxDir.toString());
    CliRun listDead = CliRun.of("webhooks", "list", "--inbox", inboxDir.toString(), "--state", "dead");

    assertAll(
        () -> assertEquals(0, deadLetters.code(), "dead-letters failed: " + deadLetters.err()),
        () -> assertTrue(deadLetters.out().contains("evt_healthy") && deadLetters.out().contains("unknown order"),
            "the healthy dead letter is listed: out=" + deadLetters.out() + " err=" + deadLetters.err()),
        () -> assertEquals(0, listDead.code(), "list --state dead failed: " + listDead.err()),
        () -> assertTrue(listDead.out().contains("evt_healthy"),
            "the healthy dead letter is listed: out=" + listDead.out() + " err=" + listDead.err()));
  }
}
