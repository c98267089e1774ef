package dev.idem.examples.demo;

import com.sun.net.httpserver.HttpServer;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSender;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.JdkWebhookHandler;
import dev.idem.webhooks.RejectionReason;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookActivity;
import dev.idem.webhooks.WebhookListener;
import dev.idem.webhooks.WebhookProcessor;
import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookSource;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The receiving side: a provider (the test kit's sender) delivers one event three times (the
 * first, a re-signed retry, a byte-identical replay) and one tampered copy to an app on the JDK
 * HttpServer. The app stores the event once, processes it once, refuses the tampered copy, and its
 * counters show each case.
 */
final class WebhookScenario implements Scenario {
  private static final String SECRET = "whsec_aWRlbS10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm";

  /** The app's counters, as its dashboard would show them. */
  private static final class Counters implements WebhookListener {
    final LongAdder accepted = new LongAdder();
    final LongAdder duplicates = new LongAdder();
    final LongAdder processed = new LongAdder();
    final Map<RejectionReason, LongAdder> rejections = new ConcurrentHashMap<>();

    @Override
    public void onEvent(WebhookActivity activity) {
      if (activity instanceof WebhookActivity.Accepted) {
        accepted.increment();
      } else if (activity instanceof WebhookActivity.Duplicate) {
        duplicates.increment();
      } else if (activity instanceof WebhookActivity.Rejected r) {
        rejections.computeIfAbsent(r.reason(), x -> new LongAdder()).increment();
      } else if (activity instanceof WebhookActivity.Processed) {
        processed.increment();
      }
    }

    long rejected(RejectionReason r) {
      LongAdder a = rejections.get(r);
      return a == null ? 0 : a.sum();
    }
  }

  @Override
  public String name() {
    return "webhook inbox";
  }

  @Override
  public ScenarioResult run(DemoEnvironment env) throws Exception {
    Counters counters = new Counters();
    AtomicInteger handlerRuns = new AtomicInteger();
    HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    ExecutorService threads = Executors.newFixedThreadPool(4);
    try (WebhookInbox inbox = WebhookInbox.sqlite(env.workDir.resolve("webhook-inbox")).open()) {
      WebhookSource source = WebhookSource.builder("provider", SignatureScheme.standardWebhooks()).secret(SECRET).build();
      // Without Idem: a receiver that verifies nothing and remembers nothing runs its handler for
      // every delivery, the tampered copy included.
      AtomicInteger naiveRuns = new AtomicInteger();
      http.createContext("/naive-webhooks", exchange -> {
        exchange.getRequestBody().readAllBytes();
        naiveRuns.incrementAndGet();
        exchange.sendResponseHeaders(200, -1);
        exchange.close();
      });
      http.createContext("/webhooks", new JdkWebhookHandler(
          WebhookReceiver.builder(source, inbox).listener(counters).build()));
      http.setExecutor(threads);
      http.start();
      WebhookProcessor processor = WebhookProcessor.builder(inbox).listener(counters)
          .pollInterval(Duration.ofMillis(50))
          .handler("invoice.paid", e -> handlerRuns.incrementAndGet())
          .build()
          .start();

      WebhookSender provider = WebhookSender.to(URI.create("http://127.0.0.1:" + http.getAddress().getPort()
          + "/webhooks"), WebhookSigner.STANDARD_WEBHOOKS, SECRET).build();
      String id = "msg_demo_1";
      byte[] body = WebhookSigner.jsonEvent("evt_demo_1", "invoice.paid", "{\"invoice\":\"in_42\",\"amount\":1299}");
      WebhookDelivery first = provider.sign(id, "invoice.paid", body);
      List<Integer> statuses = new ArrayList<>();
      statuses.add(provider.send(first));
      statuses.add(provider.send(provider.signAt(Instant.now().plusSeconds(1), id, "invoice.paid", body)));
      statuses.add(provider.send(first));
      statuses.add(provider.send(first.tampered()));

      WebhookSender toNaive = WebhookSender.to(URI.create("http://127.0.0.1:" + http.getAddress().getPort()
          + "/naive-webhooks"), WebhookSigner.STANDARD_WEBHOOKS, SECRET).build();
      for (WebhookDelivery d : List.of(first, provider.signAt(Instant.now().plusSeconds(1), id, "invoice.paid", body),
          first, first.tampered())) {
        toNaive.send(d);
      }

      long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (inbox.find("provider", id).map(e -> e.state() != InboxState.DONE).orElse(true)
          && System.nanoTime() < end) {
        Thread.sleep(10);
      }
      processor.close();

      Checks c = new Checks()
          .expect("without Idem: handler runs for one event (3 deliveries and a tampered copy)", 4, naiveRuns.get())
          .expect("answers to the 3 deliveries and the tampered copy", List.of(200, 200, 200, 401), statuses)
          .expect("events stored", 1L, counters.accepted.sum())
          .expect("handler runs", 1, handlerRuns.get())
          .expect("redeliveries answered as duplicates", 1L, counters.duplicates.sum())
          .expect("replays refused (answered 2xx, not stored)", 1L, counters.rejected(RejectionReason.REPLAY))
          .expect("tampered copies refused", 1L, counters.rejected(RejectionReason.SIGNATURE))
          .expect("processed", 1L, counters.processed.sum())
          .expect("queue length", 0L, inbox.queueLength())
          .expect("dead letters", 0L, inbox.counts().get(InboxState.DEAD));
      String outcome = "processed " + counters.processed.sum() + "x; dup " + counters.duplicates.sum()
          + ", replay " + counters.rejected(RejectionReason.REPLAY) + ", bad sig "
          + counters.rejected(RejectionReason.SIGNATURE);
      return new ScenarioResult(name(), id, statuses.size(), handlerRuns.get(), outcome, c)
          .withoutIdem(new ScenarioResult.Baseline(4, naiveRuns.get(),
              "handler ran " + naiveRuns.get() + "x, the tampered copy included"));
    } finally {
      http.stop(0);
      threads.shutdownNow();
    }
  }
}
