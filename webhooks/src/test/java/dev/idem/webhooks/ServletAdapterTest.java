package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.RawHttp;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSender;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.servlet.WebhookServlet;
import dev.idem.webhooks.support.InboxRows;
import dev.idem.webhooks.support.RecordingListener;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Servlet adapter in a real Jetty on port 0, fed by the test kit's sender. */
class ServletAdapterTest {
  static final String STRIPE_SECRET = "whsec_idemStripeTest";

  /** A Stripe source with a body cap of 2 KiB. */
  static final WebhookSource STRIPE = WebhookSource.builder("stripe", SignatureScheme.stripe()).secret(STRIPE_SECRET)
      .maxBodyBytes(2048).build();

  @TempDir
  Path dir;

  /** Serves the receiver at /webhooks/stripe on a loopback port 0 of the given Jetty; returns its address. */
  private static URI serve(Server jetty, WebhookReceiver receiver) throws Exception {
    ServerConnector connector = new ServerConnector(jetty);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    jetty.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler();
    context.addServlet(new ServletHolder(new WebhookServlet(receiver)), "/webhooks/stripe");
    jetty.setHandler(context);
    jetty.start();
    return URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/webhooks/stripe");
  }

  @Test
  void jettyServesTheReceiverFromTheRawBodyAndAnswersEachCase() throws Exception {
    RecordingListener listener = new RecordingListener();
    Server jetty = new Server();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      URI uri = serve(jetty, WebhookReceiver.builder(STRIPE, inbox).listener(listener).build());
      WebhookSender sender = WebhookSender.to(uri, WebhookSigner.STRIPE, STRIPE_SECRET).build();
      byte[] body = WebhookSigner.jsonEvent("evt_1", "payment_intent.succeeded", "{\"amount\":1299}");
      WebhookDelivery d = sender.sign("evt_1", "payment_intent.succeeded", body);

      assertEquals(200, sender.send(d));
      // A provider's re-delivery is signed again, at a later second (Stripe signs whole seconds):
      // signed in the same second it would be the same signature, which is answered as a replay.
      assertEquals(200, sender.send(sender.signAt(java.time.Instant.now().plusSeconds(2), "evt_1",
          "payment_intent.succeeded", body)));
      assertEquals(401, sender.send(d.tampered()));
      assertEquals(413, sender.send(d.padded(4096)));
      HttpResponse<String> get = HttpClient.newHttpClient().send(HttpRequest.newBuilder(uri).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(405, get.statusCode());

      assertEquals(1, InboxRows.count(dir));
      assertEquals("payment_intent.succeeded", inbox.find("stripe", "evt_1").orElseThrow().eventType(),
          "the id and type come from the verified Stripe body");
      assertEquals(List.of("accepted payment_intent.succeeded", "duplicate", "rejected signature",
          "rejected too-large"), listener.events);
    } finally {
      jetty.stop();
    }
  }

  /**
   * A delivery over the cap is refused before its body is read. Jetty then closes the connection
   * after the answer; the answer must say so, or the sender's next delivery on it fails (as the
   * guard's filter did in CI). An accepted delivery keeps the connection.
   */
  @Test
  void aBodyLeftUnreadClosesTheConnectionAndSaysSo() throws Exception {
    Server jetty = new Server();
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      URI uri = serve(jetty, WebhookReceiver.builder(STRIPE, inbox).build());
      WebhookSender sender = WebhookSender.to(uri, WebhookSigner.STRIPE, STRIPE_SECRET).build();
      WebhookDelivery d = sender.sign("evt_2", "payment_intent.succeeded",
          WebhookSigner.jsonEvent("evt_2", "payment_intent.succeeded", "{\"amount\":1299}"));

      try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
        socket.setSoTimeout(10_000);
        String accepted = exchange(socket, "/webhooks/stripe", d, d.body().length, true);
        assertTrue(accepted.startsWith("HTTP/1.1 200 "), accepted);
        assertFalse(RawHttp.closes(accepted), accepted);
        String tooLarge = exchange(socket, "/webhooks/stripe", d, 4096, false);
        assertTrue(tooLarge.startsWith("HTTP/1.1 413 "), tooLarge);
        assertTrue(RawHttp.closes(tooLarge), tooLarge);
      }
      assertEquals(1, InboxRows.count(dir));
    } finally {
      jetty.stop();
    }
  }

  /** Sends the delivery's headers with the given length, and its body if asked; reads the answer. */
  static String exchange(Socket socket, String path, WebhookDelivery d, int length, boolean withBody)
      throws IOException {
    StringBuilder head = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: localhost\r\n");
    d.headers().forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
    head.append("Content-Type: application/json\r\nContent-Length: ").append(length).append("\r\n\r\n");
    byte[] start = head.toString().getBytes(StandardCharsets.UTF_8);
    byte[] request = withBody ? Arrays.copyOf(start, start.length + d.body().length) : start;
    if (withBody) {
      System.arraycopy(d.body(), 0, request, start.length, d.body().length);
    }
    return RawHttp.exchange(socket, request);
  }
}
