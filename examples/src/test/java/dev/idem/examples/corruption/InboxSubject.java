package dev.idem.examples.corruption;

import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.InboxEntry;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookInboxException;
import dev.idem.webhooks.WebhookProcessor;
import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookSource;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The webhook inbox: accepted events, some handled (DONE), most waiting. Reading it runs the waiting
 * ones through a handler, so that the picture holds the payload each handler would get.
 */
final class InboxSubject implements Subject {
  private static final int EVENTS = 40;
  // Not the all-zero key: HMAC pads a key with zeros, so that one is the empty key, and refused.
  private static final String SECRET = "whsec_aWRlbS10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm";

  @Override
  public String name() {
    return "inbox";
  }

  @Override
  public String databaseFile() {
    return "inbox.db";
  }

  private static String eventId(int i) {
    return "evt_corruption_" + i;
  }

  private static void write(WebhookInbox inbox) {
    WebhookReceiver receiver = WebhookReceiver.builder(
        WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET).build(), inbox).build();
    int handled = EVENTS / 4;
    for (int i = 0; i < EVENTS; i++) {
      if (i == handled) {
        // The first quarter is handled (DONE): those must never be handled again.
        WebhookProcessor.builder(inbox).owner("fixture").defaultHandler(e -> { }).build().processDue(EVENTS);
      }
      byte[] body = WebhookSigner.jsonEvent(eventId(i), "order.paid",
          "{\"order\":" + i + ",\"total\":\"" + (17 * i) + ".00\"}");
      Map<String, List<String>> headers = new TreeMap<>();
      WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, eventId(i), "order.paid", Instant.now(), body).headers()
          .forEach((k, v) -> headers.put(k, List.of(v)));
      int status = receiver.handle("POST", headers, body).status();
      if (status != 200) {
        throw new IllegalStateException("the fixture's delivery " + i + " was answered " + status);
      }
    }
  }

  @Override
  public void writeAndClose(Path dir) {
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      write(inbox);
    }
  }

  @Override
  public void writeAndHalt(Path dir) {
    write(WebhookInbox.sqlite(dir).open());
    Runtime.getRuntime().halt(HALT_CODE);
  }

  @Override
  public Map<String, String> read(Path dir) {
    Map<String, String> picture = new TreeMap<>();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      for (int i = 0; i < EVENTS; i++) {
        Optional<InboxEntry> e;
        try {
          e = inbox.find("acme", eventId(i));
        } catch (WebhookInboxException x) {
          picture.put(eventId(i), SAID);
          continue;
        }
        picture.put(eventId(i), e.map(x -> x.state() + " " + x.eventType()).orElse("missing"));
      }
      // What each handler gets: a changed payload handed to it would be silent damage too.
      WebhookProcessor.builder(inbox).owner("reader")
          .defaultHandler(ev -> picture.merge(ev.eventId(), " handled:" + Arrays.hashCode(ev.body()), String::concat))
          .build().processDue(EVENTS * 2);
    }
    return picture;
  }
}
