package dev.idem.webhooks;

import static dev.idem.webhooks.WebhookDeliveries.deliver;
import static dev.idem.webhooks.WebhookDeliveries.receiver;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link WebhookInbox#list(InboxState, InboxEntry, int)}: a listing read a page at a time, each
 * page after the last entry of the one before, gives every event once, in the order of one
 * {@link WebhookInbox#list(InboxState, int)}, also where events share a received time (the order
 * then goes by source, then event id).
 */
class InboxListPagesTest {
  @TempDir
  Path dir;

  final VirtualTime time = new VirtualTime(ReceiverTest.T0);

  @Test
  void pagesByKeyListEveryEventOnceInTheListingsOrder() {
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).clock(time.clock()).open()) {
      assertPagesListEveryEventOnceInOrder(inbox, time);
    }
  }

  /** The check, on an empty inbox whose clock is {@code time}'s; PostgresInboxTest runs it too. */
  static void assertPagesListEveryEventOnceInOrder(WebhookInbox inbox, VirtualTime time) {
    WebhookReceiver acme = receiver(inbox, "acme", time);
    WebhookReceiver zeta = receiver(inbox, "zeta", time);
    // Three events in one millisecond, out of key order, from two sources; then two later ones.
    deliver(zeta, time, "evt_1");
    deliver(acme, time, "evt_3");
    deliver(acme, time, "evt_2");
    time.advance(Duration.ofSeconds(1));
    deliver(acme, time, "evt_9");
    time.advance(Duration.ofSeconds(1));
    deliver(acme, time, "evt_0");

    List<String> whole = ids(inbox.list(InboxState.PENDING, 100));
    assertEquals(List.of("acme/evt_2", "acme/evt_3", "zeta/evt_1", "acme/evt_9", "acme/evt_0"), whole);
    for (int size = 1; size <= 5; size++) {
      List<String> paged = new ArrayList<>();
      InboxEntry after = null;
      List<InboxEntry> page;
      do {
        page = inbox.list(InboxState.PENDING, after, size);
        assertTrue(page.size() <= size, "a page holds at most its limit: " + page.size());
        paged.addAll(ids(page));
        after = page.isEmpty() ? after : page.get(page.size() - 1);
      } while (page.size() == size);
      assertEquals(whole, paged, "pages of " + size);
    }
    assertEquals(List.of(), inbox.list(InboxState.DEAD, null, 10));
    assertThrows(IllegalArgumentException.class, () -> inbox.list(InboxState.PENDING, null, 0));
  }

  private static List<String> ids(List<InboxEntry> entries) {
    return entries.stream().map(e -> e.source() + "/" + e.eventId()).toList();
  }
}
