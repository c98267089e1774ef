package dev.idem.webhooks;

import dev.idem.core.testing.VirtualTime;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.support.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A fleet on a real PostgreSQL: three instances, each with its own inbox connection and processor,
 * receive the same deliveries (a provider retrying against a load balancer) and process the
 * inbox together. Each event is stored once and handled once, by one instance at a time, and the
 * work is spread over the instances ({@code FOR UPDATE SKIP LOCKED} claims).
 */
@ExtendWith(PostgresExtension.class)
class PostgresInboxTest {
  static final String SECRET = ReceiverTest.SECRET;
  static final int EVENTS = 60;

  @Test
  void threeInstancesStoreEachEventOnceAndHandleItOnceBetweenThem(PgDatabase db) throws Exception {
    List<WebhookInbox> inboxes = new ArrayList<>();
    List<WebhookProcessor> processors = new ArrayList<>();
    Map<String, List<String>> handledBy = new ConcurrentHashMap<>();
    Set<String> running = ConcurrentHashMap.newKeySet();
    List<String> overlaps = new CopyOnWriteArrayList<>();
    AtomicInteger accepted = new AtomicInteger();
    try {
      List<WebhookReceiver> receivers = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).open();
        inboxes.add(inbox);
        receivers.add(WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
            .secret(SECRET).build(), inbox).listener(a -> {
              if (a instanceof WebhookActivity.Accepted) {
                accepted.incrementAndGet();
              }
            }).build());
      }
      for (int i = 0; i < 3; i++) {
        String name = "instance-" + i;
        processors.add(WebhookProcessor.builder(inboxes.get(i)).owner(name).workers(2)
            .pollInterval(Duration.ofMillis(20)).handler("order.paid", e -> {
              if (!running.add(e.eventId())) {
                overlaps.add(e.eventId());
              }
              Thread.sleep(2);  // a handler that takes a moment, so that instances overlap in time
              handledBy.computeIfAbsent(e.eventId(), k -> new CopyOnWriteArrayList<>()).add(name);
              running.remove(e.eventId());
            }).build().start());
      }
      // Every event reaches every instance: one accepts it, the others answer duplicate.
      List<Thread> threads = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        WebhookReceiver r = receivers.get(i);
        Thread t = new Thread(() -> {
          for (int n = 0; n < EVENTS; n++) {
            String id = "evt_" + n;
            WebhookDelivery d = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, id, "order.paid", Instant.now(),
                WebhookSigner.jsonEvent(id, "order.paid", "{}"));
            Map<String, List<String>> h = new TreeMap<>();
            d.headers().forEach((k, v) -> h.put(k, List.of(v)));
            if (r.handle("POST", h, d.body()).status() != 200) {
              throw new AssertionError("not 200 for " + id);
            }
          }
        });
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) {
        t.join();
      }
      Await.until("all events DONE", Duration.ofSeconds(20),
          () -> inboxes.get(0).counts().get(InboxState.DONE) == EVENTS);
      processors.forEach(WebhookProcessor::close);

      assertEquals(EVENTS, accepted.get(), "each event stored once across the instances");
      assertEquals(EVENTS, handledBy.size());
      handledBy.forEach((id, who) -> assertEquals(1, who.size(), id + " handled by " + who));
      assertEquals(List.of(), overlaps, "an event ran in two places at once");
      long instancesThatWorked = handledBy.values().stream().map(w -> w.get(0)).distinct().count();
      assertTrue(instancesThatWorked >= 2, "SKIP LOCKED should spread the work; only " + instancesThatWorked
          + " instance(s) handled events");
      assertEquals(0, inboxes.get(1).queueLength());
    } finally {
      processors.forEach(WebhookProcessor::close);
      inboxes.forEach(WebhookInbox::close);
    }
  }

  @Test
  void anExpiredLeaseOnPostgresIsTakenOverAndTheStaleCompletionIsFenced(PgDatabase db) {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    java.time.Clock clock = time.clock();
    try (WebhookInbox a = WebhookInbox.postgres(db.dataSource()).clock(clock).open();
        WebhookInbox b = WebhookInbox.postgres(db.dataSource()).clock(clock).open()) {
      WebhookReceiver r = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.standardWebhooks())
          .secret(SECRET).clock(clock).build(), a).build();
      WebhookDelivery d = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "evt_1", "t", clock.instant(),
          WebhookSigner.jsonEvent("evt_1", "t", "{}"));
      Map<String, List<String>> h = new TreeMap<>();
      d.headers().forEach((k, v) -> h.put(k, List.of(v)));
      assertEquals(200, r.handle("POST", h, d.body()).status());

      AtomicInteger runs = new AtomicInteger();
      WebhookProcessor other = WebhookProcessor.builder(b).owner("b").lease(Duration.ofSeconds(10))
          .handler("t", e -> runs.incrementAndGet()).build();
      WebhookProcessor slow = WebhookProcessor.builder(a).owner("a").lease(Duration.ofSeconds(10)).handler("t", e -> {
        runs.incrementAndGet();
        assertEquals(0, other.processDue(10), "leased to a: instance b cannot claim it");
        time.advance(Duration.ofSeconds(11));
        assertEquals(1, other.processDue(10), "the lease expired: instance b takes over");
      }).build();
      slow.processDue(10);

      assertEquals(2, runs.get());
      assertEquals(InboxState.DONE, a.find("acme", "evt_1").orElseThrow().state());
      assertEquals(List.of("stale", "done"), a.attempts("acme", "evt_1").stream()
          .map(x -> x.outcome().orElseThrow()).toList(), "a's late completion was fenced off");
      assertEquals(List.of("a", "b"), a.attempts("acme", "evt_1").stream().map(HandlerAttempt::owner).toList());
    }
  }
}
