package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.TestClient.Answer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The reference server as a program: started in this JVM through the same code path as
 * {@code main} (flags, the printed address, serving until stopped, the summary), driven over HTTP
 * as a client in another language would drive it.
 */
class IdempotentServerMainTest {
  private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+/) ");

  private final TestClient client = new TestClient();

  /** One run of the program on a thread of its own, stopped by {@link #stop()}. */
  private static final class Run implements AutoCloseable {
    final ByteArrayOutputStream out = new ByteArrayOutputStream();
    final ByteArrayOutputStream err = new ByteArrayOutputStream();
    final CompletableFuture<IdempotentServer> started = new CompletableFuture<>();
    final CountDownLatch stop = new CountDownLatch(1);
    final CompletableFuture<Integer> exit = new CompletableFuture<>();

    Run(String... args) {
      Thread t = new Thread(() -> {
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
            PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
          exit.complete(IdempotentServerMain.run(args, o, e, server -> {
            started.complete(server);
            stop.await();
          }));
        } catch (Throwable e) {
          exit.completeExceptionally(e);
        }
      }, "idempotent-server-main-test");
      t.setDaemon(true);
      t.start();
    }

    /** The address the program printed, once it is serving. */
    URI printedUrl() throws Exception {
      started.get(10, TimeUnit.SECONDS);
      Matcher m = LISTENING.matcher(out.toString(StandardCharsets.UTF_8));
      assertTrue(m.find(), out.toString(StandardCharsets.UTF_8));
      return URI.create(m.group(1));
    }

    int stop() throws Exception {
      stop.countDown();
      return exit.get(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
      stop.countDown();
    }
  }

  @Test
  void onAnyFreePortAKeyedPostSentTwiceHasOneEffect() throws Exception {
    try (Run run = new Run("--port", "0")) {
      URI orders = run.printedUrl().resolve("orders");
      assertTrue(orders.getPort() > 0, orders.toString());

      Answer first = client.post(orders, "k-main", "{\"sku\":\"A1\"}");
      Answer again = client.post(orders, "k-main", "{\"sku\":\"A1\"}");
      assertEquals(201, first.status(), first.body());
      assertFalse(first.isReplay());
      assertTrue(again.isReplay(), "the repeat is the stored answer, marked");
      assertEquals(first.body(), again.body());
      assertEquals(1, run.started.get().effectCount("k-main"), "one effect for the key");

      assertEquals(0, run.stop());
      String out = run.out.toString(StandardCharsets.UTF_8);
      assertTrue(out.contains("stopped after 2 request(s) and 1 effect(s)"), out);
      assertTrue(out.contains("key k-main: 1 effect(s)"), out);
    }
  }

  @Test
  void flagsChooseTheServerFlavour() throws Exception {
    try (Run run = new Run("--mismatch-status", "409", "--no-replay-marker", "--key-header", "X-Request-Id")) {
      URI orders = run.printedUrl().resolve("orders");
      // TestClient sends its key in Idempotency-Key, which this flavour does not read: to it the
      // POST has no key.
      Answer noKey = client.post(orders, "k-ignored", "{\"sku\":\"A1\"}");
      assertEquals(400, noKey.status(), "a POST without the configured key header is refused");
      IdempotentServer server = run.started.get();
      assertEquals(0, server.totalEffects());
      assertEquals(0, run.stop());
    }
    try (Run run = new Run("--mismatch-status", "409", "--no-replay-marker")) {
      URI orders = run.printedUrl().resolve("orders");
      Answer first = client.post(orders, "k-flavour", "{\"sku\":\"A1\"}");
      Answer replay = client.post(orders, "k-flavour", "{\"sku\":\"A1\"}");
      Answer reused = client.post(orders, "k-flavour", "{\"sku\":\"B2\"}");
      assertEquals(201, first.status());
      assertEquals(first.body(), replay.body());
      assertNull(replay.replayed(), "--no-replay-marker: the replay is unmarked");
      assertEquals(409, reused.status(), "--mismatch-status 409");
      assertEquals(1, run.started.get().effectCount("k-flavour"));
      assertEquals(0, run.stop());
    }
  }

  @Test
  void badUsageExitsWithTwoAndNamesTheFlag() throws Exception {
    String[][] bad = {
        {"--frobnicate"},
        {"--port"},
        {"--port", "eighty"},
        {"--port", "70000"},
        {"--mismatch-status", "200"},
        {"--fingerprint", "sha1"},
        {"--max-body-size", "0"},
        {"--max-body-size", "1MiB"},
        {"--max-body-size", Long.toString(4L << 30)},   // over what the builder takes: its message
    };
    for (String[] args : bad) {
      try (Run run = new Run(args)) {
        assertEquals(2, run.exit.get(10, TimeUnit.SECONDS), String.join(" ", args));
        String err = run.err.toString(StandardCharsets.UTF_8);
        assertTrue(err.startsWith("IdempotentServerMain: ") && err.contains("usage:"), err);
        assertFalse(run.started.isDone(), "nothing was started");
      }
    }
  }

  @Test
  void aPortInUseIsExitOneNamingThePort() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Run run = new Run("--port", Integer.toString(taken.getLocalPort()))) {
      assertEquals(1, run.exit.get(10, TimeUnit.SECONDS));
      String err = run.err.toString(StandardCharsets.UTF_8);
      assertTrue(err.contains("loopback port " + taken.getLocalPort()), err);
    }
  }
}
