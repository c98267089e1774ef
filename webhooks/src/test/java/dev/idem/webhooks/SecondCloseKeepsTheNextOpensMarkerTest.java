package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A second close of a closed inbox (the app's own close, then a container's destroy method on the
 * AutoCloseable bean) must not mark a clean close again: by then another open may have taken the
 * directory over, and deleting its open marker would make its crash look like a clean close.
 */
class SecondCloseKeepsTheNextOpensMarkerTest {
  @TempDir
  Path tmp;

  @Test
  void aSecondCloseOfAClosedInboxLeavesTheNextOpensCrashMarkerAlone() throws Exception {
    Path dir = tmp.resolve("inbox");
    Path marker = dir.resolve("inbox.open");
    WebhookInbox first = WebhookInbox.sqlite(dir).open();
    first.close();
    try (WebhookInbox second = WebhookInbox.sqlite(dir).open()) {
      assertTrue(Files.exists(marker), "precondition: the open inbox is marked open");

      first.close(); // closed twice

      assertTrue(Files.exists(marker), "the closed inbox's second close removed the crash marker of the inbox"
          + " open now: a kill of it would look like a clean close");
    }
  }
}
