package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSender;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.support.Await;
import dev.idem.webhooks.support.RecordingListener;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * 32 concurrent deliveries of one event over real HTTP (the JDK HttpServer adapter): every one is
 * answered 2xx, exactly one is stored, and the handler runs exactly once.
 */
class ConcurrentDeliveryTest {
  static final String SECRET = ReceiverTest.SECRET;

  @TempDir
  Path dir;

  @Test
  void thirtyTwoConcurrentDeliveriesOfOneEventRunItsHandlerExactlyOnce() throws Exception {
    RecordingListener listener = new RecordingListener();
    AtomicInteger runs = new AtomicInteger();
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    ExecutorService serverThreads = Executors.newFixedThreadPool(32);
    ExecutorService senders = Executors.newFixedThreadPool(32);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookSource source = WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET).build();
      server.createContext("/hooks", new JdkWebhookHandler(
          WebhookReceiver.builder(source, inbox).listener(listener).build()));
      server.setExecutor(serverThreads);
      server.start();
      WebhookProcessor processor = WebhookProcessor.builder(inbox).listener(listener).workers(4)
          .handler("order.paid", e -> runs.incrementAndGet()).build().start();

      WebhookSender sender = WebhookSender.to(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/hooks"),
          WebhookSigner.STANDARD_WEBHOOKS, SECRET).build();
      byte[] body = WebhookSigner.jsonEvent("evt_1", "order.paid", "{\"amount\":5}");
      // Half are byte-identical copies (a replayed request), half the provider's re-signed retries.
      WebhookDelivery copy = sender.signAt(Instant.now(), "msg_1", "order.paid", body);
      WebhookDelivery resigned = sender.signAt(Instant.now().minusSeconds(7), "msg_1", "order.paid", body);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Integer>> statuses = new ArrayList<>();
      for (int i = 0; i < 32; i++) {
        WebhookDelivery d = i % 2 == 0 ? copy : resigned;
        statuses.add(senders.submit(() -> {
          go.await();
          return sender.send(d);
        }));
      }
      go.countDown();
      for (Future<Integer> f : statuses) {
        assertEquals(200, f.get());
      }
      Await.until("the event is processed", Duration.ofSeconds(10),
          () -> inbox.find("acme", "msg_1").map(e -> e.state() == InboxState.DONE).orElse(false));
      processor.close();

      assertEquals(1, runs.get(), "handler runs");
      assertEquals(1, listener.events.stream().filter(e -> e.startsWith("accepted")).count());
      long duplicates = listener.events.stream().filter(e -> e.equals("duplicate")).count();
      long replays = listener.events.stream().filter(e -> e.equals("rejected replay")).count();
      assertEquals(31, duplicates + replays, listener.events.toString());
      assertTrue(replays >= 15, "the byte-identical copies after the first are replays: " + replays);
      assertEquals(1, inbox.counts().get(InboxState.DONE));
      assertEquals(1, inbox.attempts("acme", "msg_1").size());
    } finally {
      server.stop(0);
      serverThreads.shutdownNow();
      senders.shutdownNow();
    }
  }
}
