package dev.idem.webhooks;

import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The receiving app in a child JVM, killed with SIGKILL at a chosen point. Modes:
 * <ul>
 *   <li>{@code accept N}: accepts N deliveries, writes "acked id" after each 2xx, then kills itself
 *       before any processing;</li>
 *   <li>{@code process-kill K}: processes, and kills itself inside the K-th handler run, after its
 *       "start" marker and before its "done" marker;</li>
 *   <li>{@code process}: processes until the queue is empty and exits 0.</li>
 * </ul>
 * Markers are appended and fsynced, so the parent counts what really happened before the kill.
 */
public final class KillChild {
  static final String SECRET = "whsec_aWRlbS10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm";

  private KillChild() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    Path markers = Path.of(args[1]);
    String mode = args[2];
    WebhookInbox inbox = WebhookInbox.sqlite(dir).open();
    if (mode.equals("accept")) {
      int n = Integer.parseInt(args[3]);
      WebhookReceiver receiver = WebhookReceiver.builder(
          WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET).build(), inbox).build();
      for (int i = 0; i < n; i++) {
        String id = "evt_" + i;
        WebhookDelivery d = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, id, "order.paid", Instant.now(),
            WebhookSigner.jsonEvent(id, "order.paid", "{\"n\":" + i + "}"));
        Map<String, List<String>> h = new TreeMap<>();
        d.headers().forEach((k, v) -> h.put(k, List.of(v)));
        if (receiver.handle("POST", h, d.body()).status() == 200) {
          mark(markers, "acked " + id);
        }
      }
      killMyself();
    }
    int killAt = mode.equals("process-kill") ? Integer.parseInt(args[3]) : -1;
    AtomicInteger started = new AtomicInteger();
    WebhookProcessor p = WebhookProcessor.builder(inbox).workers(1).pollInterval(Duration.ofMillis(20))
        .handler("order.paid", e -> {
          mark(markers, "start " + e.eventId() + " attempt " + e.attempt());
          if (started.incrementAndGet() == killAt) {
            killMyself();
          }
          mark(markers, "done " + e.eventId());
        }).build().start();
    long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (inbox.queueLength() > 0 && System.nanoTime() < end) {
      Thread.sleep(10);
    }
    p.close();
    long left = inbox.queueLength();  // before the close: a closed inbox answers nothing
    inbox.close();
    System.exit(left == 0 ? 0 : 3);
  }

  static synchronized void mark(Path file, String line) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.APPEND)) {
      ch.write(ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8)));
      ch.force(true);
    }
  }

  /** A real SIGKILL from outside the JVM: no shutdown hooks, nothing flushed. */
  static void killMyself() throws Exception {
    new ProcessBuilder("sh", "-c", "kill -9 " + ProcessHandle.current().pid()).inheritIO().start().waitFor();
    Thread.sleep(60_000);
    throw new IllegalStateException("SIGKILL did not arrive");
  }
}
