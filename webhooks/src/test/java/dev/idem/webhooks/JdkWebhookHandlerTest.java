package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.idem.jdbc.support.RawHttp;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSender;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.support.InboxRows;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JDK HttpServer adapter, on one raw connection. */
class JdkWebhookHandlerTest {
  @TempDir
  Path dir;

  /**
   * The JDK's server reads at most 64 KiB of a body left unread before it reuses the connection,
   * and past that resets it after an answer that did not say so: a delivery over the cap, refused
   * unread, must say that the connection closes. An accepted delivery keeps the connection.
   */
  @Test
  void aDeliveryRefusedUnreadSaysTheConnectionClosesAndAnAcceptedOneKeepsIt() throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 8);
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try (WebhookInbox inbox = WebhookInbox.sqlite(dir).open()) {
      server.createContext("/hooks", new JdkWebhookHandler(WebhookReceiver.builder(ServletAdapterTest.STRIPE, inbox)
          .build()));
      server.setExecutor(threads);
      server.start();
      int port = server.getAddress().getPort();
      WebhookSender sender = WebhookSender.to(URI.create("http://127.0.0.1:" + port + "/hooks"),
          WebhookSigner.STRIPE, ServletAdapterTest.STRIPE_SECRET).build();
      WebhookDelivery d = sender.sign("evt_3", "payment_intent.succeeded",
          WebhookSigner.jsonEvent("evt_3", "payment_intent.succeeded", "{\"amount\":1299}"));

      try (Socket socket = new Socket("127.0.0.1", port)) {
        socket.setSoTimeout(10_000);
        String accepted = ServletAdapterTest.exchange(socket, "/hooks", d, d.body().length, true);
        assertTrue(accepted.startsWith("HTTP/1.1 200 "), accepted);
        assertFalse(RawHttp.closes(accepted), accepted);
        String tooLarge = ServletAdapterTest.exchange(socket, "/hooks", d, 200_000, false);
        assertTrue(tooLarge.startsWith("HTTP/1.1 413 "), tooLarge);
        assertTrue(RawHttp.closes(tooLarge), tooLarge);
      }
      assertEquals(1, InboxRows.count(dir));
    } finally {
      server.stop(0);
      threads.shutdownNow();
    }
  }
}
