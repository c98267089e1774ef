package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.RecordId;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every read-only command runs while the app has its stores open: the journal, the webhook inbox
 * (whose owner holds inbox.lock) and the guard's store, opened here as the app opens them. The
 * commands that change a store refuse, and say why.
 */
class BesideTheAppTest {
  // Not the all-zero key: HMAC pads a key with zeros, so that one is the empty key, and refused.
  static final String SECRET = "whsec_aWRlbS10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm";

  @TempDir
  Path dir;

  private JdbcJournal journal;
  private WebhookInbox inbox;
  private JdbcIdempotencyStore guardStore;

  /** The app, with one pending operation, one dead letter and one completed guard record. */
  @BeforeEach
  void theAppRuns() throws Exception {
    journal = JdbcJournal.openEmbedded(dir.resolve("journal"));
    RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders"))
        .body("{\"amount\":1}".getBytes(StandardCharsets.UTF_8), "application/json").build();
    OperationId op = new OperationId("tenant-1", "create-order", IdempotencyKey.of("key-live-1"));
    journal.begin(new NewOperation(op, null, Fingerprinter.defaults().fingerprint(snap), snap, Instant.now()));

    inbox = WebhookInbox.sqlite(dir.resolve("inbox")).open();
    WebhookReceiver receiver = WebhookReceiver.builder(
        WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET).build(), inbox).build();
    byte[] body = WebhookSigner.jsonEvent("evt_live", "order.paid", "{}");
    Map<String, List<String>> headers = new TreeMap<>();
    WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "evt_live", "order.paid", Instant.now(), body).headers()
        .forEach((k, v) -> headers.put(k, List.of(v)));
    assertEquals(200, receiver.handle("POST", headers, body).status());
    WebhookProcessor.builder(inbox).handler("order.paid", e -> {
      throw new PermanentWebhookException("unknown order");
    }).build().processDue(10);
    assertEquals(InboxState.DEAD, inbox.find("acme", "evt_live").orElseThrow().state());

    guardStore = JdbcIdempotencyStore.sqlite(dir.resolve("guard.db"));
    RecordId id = new RecordId("alice", "POST /orders", "key-guard-1");
    Instant now = Instant.now();
    long g = ((ClaimAttempt.Claimed) guardStore.claim(id, new Fingerprint("a".repeat(64)), "svc", now,
        now.plusSeconds(30), now.plus(Duration.ofHours(24)))).generation();
    guardStore.complete(id, g, "svc", now, new StoredResponse(201, Map.of(), "{\"card\":\"4111\"}".getBytes(),
        false), now.plus(Duration.ofHours(24)));
  }

  @AfterEach
  void theAppStops() throws Exception {
    guardStore.close();
    inbox.close();
    journal.close();
  }

  @Test
  void everyReadOnlyCommandRunsWhileTheAppHasItsStoresOpen() throws Exception {
    String j = dir.resolve("journal").toString();
    String in = dir.resolve("inbox").toString();
    String g = dir.resolve("guard.db").toString();

    assertOk(CliRun.of("journal", "list", "--dir", j), "key-live-1", "1 operation(s)");
    assertOk(CliRun.of("journal", "show", "--dir", j, "--scope", "tenant-1", "--operation", "create-order",
        "--key", "key-live-1"), "state:      PENDING");
    assertOk(CliRun.of("journal", "stats", "--dir", j), "PENDING    1");
    assertOk(CliRun.of("journal", "purge", "--dir", j, "--older-than", "P1D"), "would purge 0");

    assertOk(CliRun.of("webhooks", "dead-letters", "--inbox", in), "acme evt_live order.paid", "1 dead letter(s)");
    assertOk(CliRun.of("webhooks", "list", "--inbox", in, "--state", "dead"), "evt_live", "1 DEAD event(s)");
    assertOk(CliRun.of("webhooks", "stats", "--inbox", in), "DEAD       1");

    CliRun records = CliRun.of("guard", "list", "--store", g);
    assertOk(records, "COMPLETED", "key-guard-1", "status=201", "1 record(s)");
    assertTrue(!records.out().contains("4111"), "stored bodies are never printed");
    assertOk(CliRun.of("guard", "list", "--store", g, "--state", "in_flight"), "0 IN_FLIGHT record(s)");
    assertOk(CliRun.of("guard", "stats", "--store", g), "COMPLETED 1");

    // The app's stores are intact and still its own.
    assertEquals(InboxState.DEAD, inbox.find("acme", "evt_live").orElseThrow().state());
    assertTrue(journal.find(new OperationId("tenant-1", "create-order", IdempotencyKey.of("key-live-1"))).isPresent());
  }

  @Test
  void theCommandsThatChangeAStoreRefuseWhileTheAppOwnsIt() {
    CliRun redrive = CliRun.of("webhooks", "redrive", "--inbox", dir.resolve("inbox").toString(), "--source", "acme",
        "--event-id", "evt_live");
    assertEquals(1, redrive.code());
    assertTrue(redrive.err().startsWith(IdemCli.PREFIX) && redrive.err().contains("already open"),
        redrive.err());
    assertEquals(InboxState.DEAD, inbox.find("acme", "evt_live").orElseThrow().state(), "nothing changed");

    CliRun purge = CliRun.of("journal", "purge", "--dir", dir.resolve("journal").toString(), "--older-than", "P1D",
        "--yes");
    assertEquals(1, purge.code());
    assertTrue(purge.err().contains("already open"), purge.err());
  }

  private static void assertOk(CliRun r, String... expected) {
    assertEquals(0, r.code(), r.err());
    for (String e : expected) {
      assertTrue(r.out().contains(e), "expected \"" + e + "\" in:\n" + r.out());
    }
  }
}
