package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CLI's webhook commands: an operator lists the inbox's dead letters and re-drives one. */
class WebhooksCommandTest {
  private static final String SECRET = "whsec_" + java.util.Base64.getEncoder().encodeToString(new byte[24]);

  @TempDir
  Path dir;

  @Test
  void aDeadLetterIsListedAndReDrivenAndTheHandlerRunsItAgain() {
    Path inboxDir = dir.resolve("inbox");
    try (WebhookInbox inbox = WebhookInbox.sqlite(inboxDir).open()) {
      WebhookReceiver receiver = WebhookReceiver.builder(
          WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET).build(), inbox).build();
      Map<String, List<String>> headers = new TreeMap<>();
      byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
      WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "evt_1", "order.paid", Instant.now(), body).headers()
          .forEach((k, v) -> headers.put(k, List.of(v)));
      assertEquals(200, receiver.handle("POST", headers, body).status());
      WebhookProcessor processor = WebhookProcessor.builder(inbox)
          .handler("order.paid", e -> {
            throw new PermanentWebhookException("unknown order");
          }).build();
      processor.processDue(10);
      assertEquals(InboxState.DEAD, inbox.find("acme", "evt_1").orElseThrow().state());
    }

    CliRun list = run("webhooks", "dead-letters", "--inbox", inboxDir.toString());
    assertEquals(0, list.code(), list.err());
    assertTrue(list.out().contains("acme evt_1 order.paid") && list.out().contains("unknown order"), list.out());
    assertTrue(list.out().contains("1 dead letter(s)"), list.out());

    CliRun redrive = run("webhooks", "redrive", "--inbox", inboxDir.toString(), "--source", "acme", "--event-id",
        "evt_1");
    assertEquals(0, redrive.code(), redrive.err());
    CliRun again = run("webhooks", "redrive", "--inbox", inboxDir.toString(), "--source", "acme", "--event-id",
        "evt_1");
    assertEquals(1, again.code());
    assertTrue(again.err().contains("not a dead letter") && again.err().contains("PENDING"), again.err());

    AtomicInteger runs = new AtomicInteger();
    try (WebhookInbox inbox = WebhookInbox.sqlite(inboxDir).open()) {
      WebhookProcessor.builder(inbox).handler("order.paid", e -> runs.incrementAndGet()).build().processDue(10);
      assertEquals(1, runs.get(), "the re-driven event reached its handler again, with the same id");
      assertEquals(InboxState.DONE, inbox.find("acme", "evt_1").orElseThrow().state());
    }
  }

  @Test
  void aDirectoryWithoutAnInboxIsRefusedAndNotCreated() {
    Path missing = dir.resolve("nope");
    CliRun r = run("webhooks", "dead-letters", "--inbox", missing.toString());
    assertEquals(1, r.code());
    assertTrue(r.err().contains("no webhook inbox at"), r.err());
    assertFalse(missing.toFile().exists());
  }

  private static CliRun run(String... args) {
    return CliRun.of(args);
  }
}
