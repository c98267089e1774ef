package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.RecordId;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.StoredResponse;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.PermanentWebhookException;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookProcessor;
import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookSource;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rest of what {@link ReviewTerminalOutputTest} found in {@code list}: every command that
 * prints what a store holds prints text an app, a webhook sender or an HTTP client chose.
 * {@code show} prints a scope's newline and a reference's ANSI escape raw, as {@code list} does;
 * {@code webhooks dead-letters} a handler's error (often built from the payload) with its escapes;
 * {@code guard list} a caller and a route; and an error line a store's message with its newline,
 * on the one line an operator's script reads.
 */
class ReviewTerminalOutputEveryCommandTest {
  private static final String CLEAR_AND_RETITLE = "\u001b[2J\u001b]0;owned\u0007";
  // Not the all-zero key: HMAC pads a key with zeros, so that one is the empty key, and refused.
  private static final String SECRET = "whsec_aWRlbS10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm";

  @TempDir
  Path dir;

  @Test
  void showPrintsEachFieldOnItsOwnLineWithItsControlCharactersEscaped() throws Exception {
    Path journal = dir.resolve("journal");
    Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
    OperationId id = new OperationId("acme\nstate:      SUCCEEDED", "charge\u202ed-rac", IdempotencyKey.of("k-1"));
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/charges")).build();
      j.begin(new NewOperation(id, "order-7" + CLEAR_AND_RETITLE, Fingerprinter.defaults().fingerprint(snap), snap,
          t0));
      Lease lease = j.claim(id, "app\u009b2J", t0, Duration.ofMinutes(1)).orElseThrow();
      j.recordAttempt(id, lease, new AttemptRecord(1, lease.generation(), t0, t0.plusMillis(5),
          Classification.PERMANENT, 402, null, "HTTP 402\r\nforged", Duration.ZERO, "permanent"));
      j.transition(id, lease, Transition.finish(OperationState.FAILED, t0.plusMillis(5), null, "declined\u001b[31m"));
    }

    CliRun r = CliRun.of("journal", "show", "--dir", journal.toString(), "--scope", id.scope(), "--operation",
        id.operation(), "--key", "k-1");

    assertEquals(0, r.code(), r.err());
    assertNoTerminalControl(r.out());
    assertTrue(r.out().contains("scope:      acme\\nstate:      SUCCEEDED\n"), r.out());
    assertTrue(r.out().contains("operation:  charge\\u202ed-rac\n"), r.out());
    assertTrue(r.out().contains("reference:  order-7\\u001b[2J\\u001b]0;owned\\u0007\n"), r.out());
    assertTrue(r.out().contains("(declined\\u001b[31m)"), r.out());
    assertTrue(r.out().contains("HTTP 402\\r\\nforged"), r.out());
    assertEquals(1, r.out().lines().filter(l -> l.startsWith("state:")).count(), r.out());
  }

  @Test
  void deadLettersPrintAHandlersErrorOnItsLineWithItsEscapesVisible() {
    Path inboxDir = dir.resolve("inbox");
    try (WebhookInbox inbox = WebhookInbox.sqlite(inboxDir).open()) {
      WebhookReceiver receiver = WebhookReceiver.builder(
          WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET).build(), inbox).build();
      Map<String, List<String>> headers = new TreeMap<>();
      byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{}");
      WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "evt_1", "order.paid", Instant.now(), body).headers()
          .forEach((k, v) -> headers.put(k, List.of(v)));
      assertEquals(200, receiver.handle("POST", headers, body).status());
      WebhookProcessor.builder(inbox).handler("order.paid", e -> {
        throw new PermanentWebhookException("unknown order" + CLEAR_AND_RETITLE + "\nDEAD       acme evt_2");
      }).build().processDue(10);
      assertEquals(InboxState.DEAD, inbox.find("acme", "evt_1").orElseThrow().state());
    }

    CliRun r = CliRun.of("webhooks", "dead-letters", "--inbox", inboxDir.toString());

    assertEquals(0, r.code(), r.err());
    assertNoTerminalControl(r.out());
    assertEquals(2, r.out().lines().count(), "one line for the one dead letter and the count:\n" + r.out());
    assertTrue(r.out().contains("unknown order\\u001b[2J\\u001b]0;owned\\u0007\\nDEAD       acme evt_2"), r.out());
  }

  @Test
  void guardListPrintsACallerAndARouteWithTheirEscapesVisible() {
    Path db = dir.resolve("guard.db");
    Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(db)) {
      RecordId id = new RecordId("tenant\u001b[2J", "POST /orders\nCOMPLETED alice", "k-1");
      long g = ((ClaimAttempt.Claimed) store.claim(id, new Fingerprint("a".repeat(64)), "svc\u0085", now,
          now.plusSeconds(30), now.plus(Duration.ofHours(24)))).generation();
      assertTrue(store.complete(id, g, "svc\u0085", now, new StoredResponse(201, Map.of(), new byte[0], false),
          now.plus(Duration.ofHours(24))));
    }

    CliRun r = CliRun.of("guard", "list", "--store", db.toString());

    assertEquals(0, r.code(), r.err());
    assertNoTerminalControl(r.out());
    assertEquals(2, r.out().lines().count(), "one line for the one record and the count:\n" + r.out());
    assertTrue(r.out().contains("tenant\\u001b[2J") && r.out().contains("POST /orders\\nCOMPLETED alice")
        && r.out().contains("holder=svc\\u0085"), r.out());
  }

  @Test
  void anErrorLineIsOneLineWithAStoresControlCharactersEscaped() {
    assertEquals("idem: no such operation: acme\\u001b[2J/pay/k-1\\nidem: forged",
        IdemCli.errorLine(new IllegalStateException("no such operation: acme\u001b[2J/pay/k-1\nidem: forged")));
  }

  /** No character a terminal acts on or reorders by, other than the line ends the CLI writes. */
  private static void assertNoTerminalControl(String out) {
    out.codePoints().filter(c -> c != '\n').forEach(c -> {
      int type = Character.getType(c);
      assertTrue(type != Character.CONTROL && type != Character.FORMAT,
          () -> String.format("U+%04X reached the terminal:%n%s", c, out.replaceAll("\\p{Cc}|\\p{Cf}", "<?>")));
    });
  }
}
