package dev.idem.examples.samples;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.httpclient.IdempotentHttpClient;
import dev.idem.testkit.webhook.WebhookSender;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.InboxState;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookProcessor;
import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookSource;
import dev.idem.webhooks.JdkWebhookHandler;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * "Fetch the truth" (seed 001): a webhook is news that something happened, not the truth. The
 * handler re-reads the payment from the sender's API through Idem's own HTTP client before acting,
 * and keys its one side effect (a fulfilment POST) with a key derived from the event id, so a
 * re-run after a crash sends the same key and the server applies it once.
 *
 * <p>Here the webhook body claims an amount of 1 and the API says 1299: the handler acts on 1299.
 */
public final class WebhookFetchTheTruthSample {
  static final String SECRET = "whsec_sampleStripeSecret";
  static final byte[] KEY_SECRET = "derive-fulfilment-keys".getBytes(StandardCharsets.UTF_8);

  private WebhookFetchTheTruthSample() {}

  /** What happened: the log lines and the effects the sender's API counted per key. */
  public record Result(List<String> log, Map<String, Integer> fulfilmentsByKey) {
  }

  /** Runs the sample in {@code dir}: a fake sender API, the app's endpoint, one event delivered twice. */
  public static Result run(Path dir) throws Exception {
    Map<String, Integer> fulfilments = new ConcurrentHashMap<>();
    List<String> log = new CopyOnWriteArrayList<>();
    HttpServer api = senderApi(fulfilments);
    HttpServer app = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    app.setExecutor(Executors.newFixedThreadPool(4));
    ObjectMapper json = new ObjectMapper();
    String apiBase = "http://127.0.0.1:" + api.getAddress().getPort();
    IdempotentHttpClient client = IdempotentHttpClient.builder(HttpClient.newHttpClient())
        .idempotentExecutor(IdempotentExecutor.builder().journal(new InMemoryJournal()).build())
        .build();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      WebhookProcessor processor = WebhookProcessor.builder(inbox)
          .handler("payment_intent.succeeded", event -> {
            JsonNode news = json.readTree(event.body());
            String pi = news.at("/data/object/id").asText();
            // 1. Re-read the object: a GET passes through the Idem client untouched.
            JsonNode truth = json.readTree(client.send(HttpRequest.newBuilder(URI.create(apiBase + "/v1/payment_intents/"
                + pi)).GET().build(), BodyHandlers.ofString()).body());
            if (!"succeeded".equals(truth.get("status").asText())) {
              log.add("ignored " + pi + ": the API says " + truth.get("status").asText());
              return;
            }
            // 2. Act once: the key is derived from the event id, so every run of this handler for
            //    this event sends the same key.
            IdempotencyKey key = IdempotencyKey.derive(KEY_SECRET, "shop", "fulfil", event.eventId());
            client.operation("fulfil").key(key).send(HttpRequest.newBuilder(URI.create(apiBase + "/v1/fulfilments"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"payment_intent\":\"" + pi + "\",\"amount\":"
                    + truth.get("amount").asLong() + "}")).build(), BodyHandlers.ofString());
            log.add("fulfilled " + pi + " for " + truth.get("amount").asLong() + " (the webhook said "
                + news.at("/data/object/amount").asLong() + ")");
          })
          .pollInterval(Duration.ofMillis(50))
          .build()
          .start();
      WebhookSource stripe = WebhookSource.builder("stripe", SignatureScheme.stripe()).secret(SECRET).build();
      app.createContext("/webhooks/stripe", new JdkWebhookHandler(WebhookReceiver.builder(stripe, inbox).build()));
      app.start();

      WebhookSender sender = WebhookSender.to(URI.create("http://127.0.0.1:" + app.getAddress().getPort()
          + "/webhooks/stripe"), WebhookSigner.STRIPE, SECRET).build();
      byte[] body = WebhookSigner.jsonEvent("evt_1", "payment_intent.succeeded",
          "{\"object\":{\"id\":\"pi_1\",\"amount\":1}}");
      log.add("delivery 1: " + sender.send(sender.sign("evt_1", "payment_intent.succeeded", body)));
      log.add("delivery 2: " + sender.send(sender.sign("evt_1", "payment_intent.succeeded", body)));

      long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (inbox.find("stripe", "evt_1").map(e -> e.state() != InboxState.DONE).orElse(true)
          && System.nanoTime() < end) {
        Thread.sleep(10);
      }
      processor.close();
      return new Result(List.copyOf(log), Map.copyOf(fulfilments));
    } finally {
      app.stop(0);
      api.stop(0);
    }
  }

  /** The sender's API: the truth about pi_1, and fulfilments applied once per Idempotency-Key. */
  private static HttpServer senderApi(Map<String, Integer> fulfilments) throws java.io.IOException {
    HttpServer api = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    api.createContext("/v1/payment_intents/pi_1", ex -> reply(ex, "{\"id\":\"pi_1\",\"status\":\"succeeded\",\"amount\":1299}"));
    AtomicInteger ids = new AtomicInteger();
    Map<String, String> done = new ConcurrentHashMap<>();
    api.createContext("/v1/fulfilments", ex -> {
      String key = ex.getRequestHeaders().getFirst("Idempotency-Key");
      ex.getRequestBody().readAllBytes();
      String answer = done.computeIfAbsent(key, k -> {
        fulfilments.merge(k, 1, Integer::sum);
        return "{\"fulfilment\":" + ids.incrementAndGet() + "}";
      });
      reply(ex, answer);
    });
    api.start();
    return api;
  }

  private static void reply(com.sun.net.httpserver.HttpExchange ex, String body) throws java.io.IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(200, b.length);
    try (ex; var out = ex.getResponseBody()) {
      out.write(b);
    }
  }

  public static void main(String[] args) throws Exception {
    run(Files.createTempDirectory("idem-webhook-sample-")).log().forEach(System.out::println);
  }
}
