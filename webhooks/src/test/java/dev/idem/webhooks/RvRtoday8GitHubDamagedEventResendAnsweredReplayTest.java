package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.testkit.webhook.WebhookSigner;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review rtoday8 (commit 3f4b513d): the repair of a damaged event by its resend cannot happen for
 * GitHub (nor a {@code GenericHmac} that signs neither a time nor the event id).
 *
 * <p>docs/webhooks.md ("Answers and rejections", and the checksum paragraph) promise that the
 * resend of an event whose stored payload fails its checksum is answered {@code accepted}, its
 * payload replaces the damaged one and the dead letter for the damage is due again. The repair
 * lives in {@code InboxStore.answerKnown}, reached only after {@code insert}'s
 * {@code SELECT 1 FROM idem_webhook_inbox WHERE source = ? AND signature_digest = ?}. GitHub signs
 * the body alone, so the resend of the same event carries the very signature the damaged row
 * holds: it is answered REPLAY there ({@code 200 duplicate/replay}) and never reaches the repair.
 * The dead letter stays dead (a redrive makes it dead again), the sender has been told 2xx, and the
 * event is lost while every message says to ask for a resend. A delivery whose signature matches
 * the row of the same (source, event id) is that event's resend, not a replay under a new id.
 */
class RvRtoday8GitHubDamagedEventResendAnsweredReplayTest extends InboxOnVirtualClock {
  static final String SECRET = "It's a Secret to Everybody";

  final java.time.Clock clock = time.clock();

  WebhookReceiver receiver() {
    WebhookSource github = WebhookSource.builder("github", SignatureScheme.github()).secret(SECRET).clock(clock)
        .build();
    return WebhookReceiver.builder(github, inbox).build();
  }

  @Test
  void theResendOfADamagedGitHubEventRepairsIt() throws Exception {
    byte[] payload = "{\"action\":\"opened\",\"amount\":1299}".getBytes(StandardCharsets.UTF_8);
    String delivery = "72d3162e-cc78-11e3-81ab-4c9367dc0958";
    openInbox();
    WebhookResponse first = ReceiverTest.post(receiver(),
        WebhookSigner.GITHUB.sign(SECRET, delivery, "pull_request", clock.instant(), payload));
    assertEquals("{\"status\":\"accepted\"}", first.body());
    closeInbox();

    // A byte of the stored payload changes on disk (the case the checksum exists for).
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("inbox.db"));
        Statement s = c.createStatement()) {
      assertEquals(1, s.executeUpdate("UPDATE idem_webhook_inbox SET body = CAST(REPLACE(CAST(body AS TEXT),"
          + " '1299', '9299') AS BLOB) WHERE event_id = '" + delivery + "'"));
    }

    openInbox();
    List<String> handled = new ArrayList<>();
    WebhookProcessor processor = WebhookProcessor.builder(inbox).owner("p1").clock(clock)
        .defaultHandler(e -> handled.add(e.bodyAsString())).build();
    processor.processDue(10);
    assertEquals(List.of(), handled, "the damaged payload is never handed over (as documented)");
    assertEquals(1L, inbox.counts().get(InboxState.DEAD), "a dead letter: ask the provider to resend it");

    // The provider resends the event, as every message asks (GitHub's "Redeliver").
    time.advance(Duration.ofMinutes(2));
    WebhookResponse resend = ReceiverTest.post(receiver(),
        WebhookSigner.GITHUB.sign(SECRET, delivery, "pull_request", clock.instant(), payload));
    processor.processDue(10);

    assertEquals(List.of(new String(payload, StandardCharsets.UTF_8)), handled,
        "GitHub's resend of a damaged event was answered " + resend.status() + " " + resend.body()
            + " and never repaired it (docs: answered accepted, the dead letter due again): the event is lost");
  }
}
