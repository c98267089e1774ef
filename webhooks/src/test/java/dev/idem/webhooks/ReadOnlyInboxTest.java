package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.core.testing.VirtualTime;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The inbox opened read-only, as the CLI opens it: beside the process that owns the inbox (which
 * holds inbox.lock), it reads what the owner committed, refuses every write, and never writes a
 * byte of the inbox's files.
 */
class ReadOnlyInboxTest {
  static final String SECRET = ReceiverTest.SECRET;

  @TempDir
  Path dir;

  final VirtualTime time = new VirtualTime(ReceiverTest.T0);

  final java.time.Clock clock = time.clock();

  /** The owning app: one dead letter (evt_dead) and one event still pending (evt_new). */
  private WebhookInbox ownerWithADeadLetter() {
    WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(clock).open();
    WebhookReceiver receiver = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
        .secret(SECRET).clock(clock).build(), inbox).build();
    deliver(receiver, "evt_dead", "order.paid");
    WebhookProcessor.builder(inbox).clock(clock).owner("app")
        .handler("order.paid", e -> {
          throw new PermanentWebhookException("unknown order");
        }).build().processDue(10);
    deliver(receiver, "evt_new", "order.paid");
    return inbox;
  }

  private void deliver(WebhookReceiver receiver, String id, String type) {
    Map<String, List<String>> h = new TreeMap<>();
    byte[] body = WebhookSigner.jsonEvent(id, type, "{}");
    WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, id, type, clock.instant(), body).headers()
        .forEach((k, v) -> h.put(k, List.of(v)));
    assertEquals(200, receiver.handle("POST", h, body).status());
  }

  @Test
  void readsBesideTheOwnerAndRefusesEveryWrite() {
    try (WebhookInbox owner = ownerWithADeadLetter(); WebhookInbox reader = WebhookInbox.openReadOnly(dir)) {
      List<InboxEntry> dead = reader.deadLetters(10);
      assertEquals(1, dead.size());
      assertEquals("evt_dead", dead.get(0).eventId());
      assertTrue(dead.get(0).lastError().orElseThrow().contains("unknown order"), dead.get(0).lastError().orElseThrow());
      assertEquals(1L, reader.counts().get(InboxState.PENDING));
      assertEquals("evt_new", reader.list(InboxState.PENDING, 10).get(0).eventId());
      assertEquals(1, reader.attempts("acme", "evt_dead").size());

      assertRefused(() -> reader.redrive("acme", "evt_dead"));
      assertRefused(() -> reader.purgeDone(Duration.ZERO));
      assertThrows(IllegalArgumentException.class, () -> WebhookProcessor.builder(reader));
      assertEquals(InboxState.DEAD, owner.find("acme", "evt_dead").orElseThrow().state(), "nothing changed");

      // The owner goes on writing while the reader is open: the reader keeps its one snapshot (its
      // counts and listings agree), and a reader opened next sees the change.
      assertTrue(owner.redrive("acme", "evt_dead"));
      assertEquals(1L, reader.counts().get(InboxState.PENDING));
      try (WebhookInbox next = WebhookInbox.openReadOnly(dir)) {
        assertEquals(2L, next.counts().get(InboxState.PENDING));
        assertEquals(List.of(), next.deadLetters(10));
      }
    }
  }

  @Test
  void aClosedInboxIsReadWithoutWritingOrCreatingAFile() throws Exception {
    ownerWithADeadLetter().close();
    Map<String, String> before = digests(dir);
    try (WebhookInbox reader = WebhookInbox.openReadOnly(dir)) {
      assertEquals(1, reader.deadLetters(10).size());
      assertEquals(2, reader.counts().values().stream().mapToLong(Long::longValue).sum());
    }
    assertEquals(before, digests(dir), "no byte written, no -wal or -shm file created");
  }

  /**
   * Issue 26: an inbox left by a killed owner (its -wal and -shm files as the owner left them,
   * copied while it ran) was read through a -shm index that SQLite rebuilt in place.
   */
  @Test
  void aKilledOwnersInboxIsReadWithoutWritingAByte() throws Exception {
    Path killed = Files.createDirectories(dir.resolve("killed"));
    try (WebhookInbox owner = ownerWithADeadLetter()) {
      for (String f : new String[] {"inbox.db", "inbox.db-wal", "inbox.db-shm"}) {
        Files.copy(dir.resolve(f), killed.resolve(f));
      }
    }
    Map<String, String> before = digests(killed);
    try (WebhookInbox reader = WebhookInbox.openReadOnly(killed)) {
      assertEquals(1, reader.deadLetters(10).size());
      assertEquals(1L, reader.counts().get(InboxState.PENDING));
    }
    assertEquals(before, digests(killed), "no byte written");
  }

  @Test
  void aDirectoryWithoutAnInboxIsRefusedAndNothingIsCreated() throws Exception {
    Path missing = dir.resolve("nope");
    WebhookInboxException e = assertThrows(WebhookInboxException.class, () -> WebhookInbox.openReadOnly(missing));
    assertTrue(e.getMessage().contains("no webhook inbox at") && e.getMessage().contains("does not exist"),
        e.getMessage());
    assertFalse(Files.exists(missing));

    Path empty = Files.createDirectories(dir.resolve("empty"));
    WebhookInboxException noDb = assertThrows(WebhookInboxException.class, () -> WebhookInbox.openReadOnly(empty));
    assertTrue(noDb.getMessage().contains("it has no inbox.db"), noDb.getMessage());
    try (Stream<Path> files = Files.list(empty)) {
      assertEquals(0, files.count(), "nothing created");
    }

    Path file = Files.writeString(dir.resolve("a-file"), "x");
    WebhookInboxException f = assertThrows(WebhookInboxException.class, () -> WebhookInbox.openReadOnly(file));
    assertTrue(f.getMessage().contains("is a file"), f.getMessage());
  }

  private static void assertRefused(Executable write) {
    WebhookInboxException e = assertThrows(WebhookInboxException.class, write);
    assertTrue(e.getMessage().contains("read-only; nothing was written"), e.getMessage());
    assertTrue(e.getMessage().contains("webhook inbox") && !e.getMessage().contains("journal"),
        "names the inbox, not a journal: " + e.getMessage());
  }

  private static Map<String, String> digests(Path d) throws Exception {
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> files = Files.list(d)) {
      for (Path f : files.toList()) {
        if (Files.isRegularFile(f)) {
          out.put(f.getFileName().toString(),
              HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f))));
        }
      }
    }
    return out;
  }
}
