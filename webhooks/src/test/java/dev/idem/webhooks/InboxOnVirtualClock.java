package dev.idem.webhooks;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * Base of the receiver and processor tests that work on one embedded inbox: a fresh temporary
 * folder and a virtual clock per test (starting at {@link ReceiverTest#T0} unless the test names
 * another start), the inbox opened there on that clock, and closed after each test (after the
 * test's own {@code @AfterEach} methods, so that what a test closes first still sees it open).
 */
abstract class InboxOnVirtualClock {
  @TempDir
  Path dir;

  final VirtualTime time;

  /** The inbox opened last by {@link #openInbox()}; null until a test opens one. */
  WebhookInbox inbox;

  InboxOnVirtualClock() {
    this(ReceiverTest.T0);
  }

  InboxOnVirtualClock(Instant start) {
    time = new VirtualTime(start);
  }

  /** Opens the embedded inbox in {@link #dir} on the virtual clock, closing the one opened before. */
  WebhookInbox openInbox() {
    closeInbox();
    inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open();
    return inbox;
  }

  @AfterEach
  void closeInbox() {
    if (inbox != null) {
      inbox.close();
      inbox = null;
    }
  }
}
