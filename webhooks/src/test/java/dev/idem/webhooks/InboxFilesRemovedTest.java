package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The inbox's directory removed while it is open (a deploy script, a temp-file cleaner): SQLite
 * keeps writing the removed files, so an accept acknowledged then would be forgotten by the next
 * open, and the sender, told 2xx, never redelivers. No delivery may be acknowledged from then on,
 * and the close must not look clean. Likewise for its lock files removed.
 */
class InboxFilesRemovedTest {
  @TempDir
  Path tmp;

  @Test
  void anAcceptAfterTheDirectoryWasRemovedIsNotAcknowledged() throws Exception {
    Path dir = tmp.resolve("inbox");
    WebhookInbox inbox = WebhookInbox.sqlite(dir).open();
    assertEquals(AcceptResult.ACCEPTED, inbox.accept(event("evt_1", 1)));
    deleteTree(dir);

    WebhookInboxException accept = assertThrows(WebhookInboxException.class, () -> inbox.accept(event("evt_2", 2)));
    assertTrue(accept.getMessage().contains("files were removed or replaced"), accept.getMessage());
    WebhookInboxException close = assertThrows(WebhookInboxException.class, inbox::close);
    assertTrue(close.getMessage().contains("files were removed or replaced"), close.getMessage());
    assertFalse(Files.exists(dir), "the close recreated " + dir);
  }

  /**
   * Its lock files removed (a script clearing "stale" lock files): another process could open the
   * inbox and run this one's unfinished deliveries again, so no accept is acknowledged from then on.
   */
  @Test
  void anAcceptAfterTheLockFilesWereRemovedIsNotAcknowledged() throws Exception {
    Path dir = tmp.resolve("inbox");
    WebhookInbox inbox = WebhookInbox.sqlite(dir).open();
    assertEquals(AcceptResult.ACCEPTED, inbox.accept(event("evt_1", 1)));
    try (Stream<Path> files = Files.list(dir)) {
      for (Path lock : files.filter(f -> f.getFileName().toString().endsWith(".lock")).toList()) {
        Files.delete(lock);
      }
    }

    WebhookInboxException accept = assertThrows(WebhookInboxException.class, () -> inbox.accept(event("evt_2", 2)));
    assertTrue(accept.getMessage().contains("lock file") && accept.getMessage().contains("another process may own"),
        accept.getMessage());
    WebhookInboxException close = assertThrows(WebhookInboxException.class, inbox::close);
    assertTrue(close.getMessage().contains("lock file"), close.getMessage());
  }

  /**
   * The close after its lock files were removed takes the lock again (nobody else holds it) and
   * marks the close, so that the reopen the error asks for opens the inbox instead of refusing it
   * as if acknowledged deliveries were lost with its -wal file, which SQLite's last close removed.
   */
  @Test
  void theInboxReopensAfterAStopForItsRemovedLockFiles() throws Exception {
    Path dir = tmp.resolve("inbox");
    WebhookInbox inbox = WebhookInbox.sqlite(dir).open();
    assertEquals(AcceptResult.ACCEPTED, inbox.accept(event("evt_1", 1)));
    try (Stream<Path> files = Files.list(dir)) {
      for (Path lock : files.filter(f -> f.getFileName().toString().endsWith(".lock")).toList()) {
        Files.delete(lock);
      }
    }
    assertThrows(WebhookInboxException.class, () -> inbox.accept(event("evt_2", 2)));
    assertThrows(WebhookInboxException.class, inbox::close);

    try (WebhookInbox reopened = WebhookInbox.sqlite(dir).open()) {
      // The delivery accepted before the stop is there: the same one again is a replay.
      assertEquals(AcceptResult.REPLAY, reopened.accept(event("evt_1", 1)));
    }
  }

  private static VerifiedWebhook event(String id, int n) {
    return new VerifiedWebhook("acme", id, "order.paid", null, Instant.ofEpochMilli(1000 + n),
        ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8), new byte[] {(byte) n, 7});
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
