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
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
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

  /** {@link InboxListPagesTest} on PostgreSQL: its row comparison and collation order pages as one listing. */
  @Test
  void pagesByKeyListEveryEventOnceInTheListingsOrder(PgDatabase db) {
    VirtualTime time = new VirtualTime(ReceiverTest.T0);
    try (WebhookInbox inbox = WebhookInbox.postgres(db.dataSource()).clock(time.clock()).open()) {
      InboxListPagesTest.assertPagesListEveryEventOnceInOrder(inbox, time);
    }
  }

  /**
   * {@link RotationReplayTest} on PostgreSQL, across two instances: an unsigned id, both secrets
   * configured, and a replay that carries the other secret's signature under a new id, also when it
   * arrives at the same moment as the delivery it copies (each instance has its own connection and
   * sees nothing the other has not committed: only the signature index can refuse it).
   */
  @Test
  void duringARotationAReplayWithTheOtherSecretsSignatureIsRefusedByEveryInstance(PgDatabase db) throws Exception {
    String neu = RotationReplayTest.NEW;
    String old = RotationReplayTest.OLD;
    try (WebhookInbox a = WebhookInbox.postgres(db.dataSource()).open();
        WebhookInbox b = WebhookInbox.postgres(db.dataSource()).open()) {
      WebhookReceiver before = rotating(a, old);
      assertEquals("{\"status\":\"accepted\"}", RotationReplayTest.post(before, "ev-0", "{\"n\":0}", old).body());
      WebhookReceiver ra = rotating(a, neu, old);
      WebhookReceiver rb = rotating(b, neu, old);
      assertEquals("{\"status\":\"accepted\"}", RotationReplayTest.post(ra, "ev-1", "{\"n\":1}", neu, old).body());

      String replay = "{\"status\":\"duplicate\",\"reason\":\"replay\"}";
      assertEquals(replay, RotationReplayTest.post(rb, "ev-1b", "{\"n\":1}", old).body());
      assertEquals(replay, RotationReplayTest.post(rb, "ev-0b", "{\"n\":0}", neu, old).body(),
          "an event stored under the old secret alone, before the rotation, is still recognised");
      assertEquals("{\"status\":\"accepted\"}", RotationReplayTest.post(rb, "ev-2", "{\"n\":2}", old).body());

      int rounds = 20;
      List<String> answers = new CopyOnWriteArrayList<>();
      ExecutorService pool = Executors.newFixedThreadPool(2);
      try {
        for (int i = 0; i < rounds; i++) {
          String body = "{\"round\":" + i + "}";
          String originalId = "orig-" + i;
          String copyId = "copy-" + i;
          CyclicBarrier together = new CyclicBarrier(2);
          Future<String> original = pool.submit(() -> {
            together.await();
            return RotationReplayTest.post(ra, originalId, body, neu, old).body();
          });
          Future<String> copy = pool.submit(() -> {
            together.await();
            return RotationReplayTest.post(rb, copyId, body, old).body();
          });
          answers.add(original.get(30, TimeUnit.SECONDS));
          answers.add(copy.get(30, TimeUnit.SECONDS));
        }
      } finally {
        pool.shutdownNow();
      }
      assertEquals(rounds, answers.stream().filter("{\"status\":\"accepted\"}"::equals).count(), answers.toString());
      assertEquals(rounds, answers.stream().filter(replay::equals).count(), answers.toString());
      assertEquals(3 + rounds, a.counts().get(InboxState.PENDING), "each content stored once");
    }
  }

  private static WebhookReceiver rotating(WebhookInbox inbox, String... secrets) {
    WebhookSource.Builder b = WebhookSource.builder("acme", SignatureScheme.hmac(RotationReplayTest.UNSIGNED_ID));
    for (String s : secrets) {
      b.secret(s);
    }
    return WebhookReceiver.builder(b.build(), inbox).build();
  }
}
