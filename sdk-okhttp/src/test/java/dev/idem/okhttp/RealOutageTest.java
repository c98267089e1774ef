package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real outage, on the real clock, in a child JVM ({@link OutageChild}): an app queues orders in
 * an outbox for a target whose port is closed (the first one alone, too few failures for the breaker
 * to open and pause it: the reported case), and after at least a minute of refused connections
 * the testkit's reference server comes up on that very port. Every order is delivered exactly once
 * with its key, none is ever reported FAILED, the journal says SUCCEEDED, and the dispatcher's log
 * said what happened: PENDING while offline, progress once the target answered.
 *
 * <p>Takes about 70 s of wall time (the outage itself, then up to the retry policy's 10 s
 * {@code maxDelay} or the breaker's 10 s open period, and a 2 s poll), under the ~75 s this project
 * allows a test in every build, so it runs in every build; it is tagged {@value #TAG}, so that
 * {@code -DexcludedGroups=real-outage} leaves it out of a quick local run. The port is chosen at
 * run time: a ServerSocket is bound to port 0 and closed; if another process takes the port before
 * the server binds it, the scenario runs again on a new one.
 */
@Tag(RealOutageTest.TAG)
class RealOutageTest {
  static final String TAG = "real-outage";
  private static final Duration OUTAGE = Duration.ofSeconds(60);
  private static final int ORDERS = 5;
  private static final int TRIES = 3;

  @Test
  void anOutboxKeepsEveryOrderThroughAMinuteWithTheTargetPortClosedAndDeliversEachOnce(@TempDir Path dir)
      throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        run(Files.createDirectories(dir.resolve("try-" + attempt)), closedPort());
        return;
      } catch (PortTaken e) {
        if (attempt == TRIES) {
          throw new AssertionError("the chosen port was taken " + TRIES + " times in a row", e);
        }
      }
    }
  }

  /** A loopback port nothing listens on, as far as anyone can know right now. */
  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static void run(Path dir, int port) throws Exception {
    long started = System.nanoTime();
    Path log = dir.resolve("child.log");
    Process child = startChild(log, "http://127.0.0.1:" + port + "/orders", String.valueOf(ORDERS));
    try {
      long submittedAt = awaitFigure(child, log, "submitted at");
      // The target stays down for the whole outage, counted from when the orders were queued.
      long wait = submittedAt + OUTAGE.toMillis() - System.currentTimeMillis();
      if (wait > 0) {
        Thread.sleep(wait);
      }
      IdempotentServer server;
      try {
        server = IdempotentServer.builder().port(port).start();
      } catch (UncheckedIOException e) {
        throw new PortTaken(e);
      }
      long upAt = System.currentTimeMillis();
      try (server) {
        assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child did not finish:\n" + Files.readString(log));
        String out = Files.readString(log);
        assertEquals(0, child.exitValue(), out);
        assertTrue(upAt - submittedAt >= OUTAGE.toMillis(), "outage of " + (upAt - submittedAt) + " ms");
        assertEveryOrderDeliveredOnce(server, out);
        assertTheLogToldTheTruth(out);
        System.out.printf("RealOutageTest: outage %d ms, delivered %d ms after the target came up, %d s in all;"
            + " %s%n", upAt - submittedAt, System.currentTimeMillis() - upAt,
            TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started), figures(out, "attempts="));
      }
    } finally {
      child.destroyForcibly();
    }
  }

  private static void assertEveryOrderDeliveredOnce(IdempotentServer server, String out) {
    List<String> keys = new ArrayList<>();
    Matcher m = Pattern.compile("order key=(\\S+) outcome=(\\S+)").matcher(out);
    while (m.find()) {
      assertEquals("delivered:" + m.group(1), m.group(2), "never told FAILED or UNCERTAIN:\n" + out);
      keys.add(m.group(1));
    }
    assertEquals(ORDERS, keys.size(), out);
    for (String key : keys) {
      assertEquals(1, server.effectCount(key), "effects of " + key);
    }
    for (ReceivedRequest r : server.recordedRequests()) {
      assertTrue(keys.stream().anyMatch(k -> r.keyHeader().equals(Optional.of(k))), "an order's key: " + r);
    }
    assertTrue(out.contains("journal SUCCEEDED=" + ORDERS), out);
    assertTrue(out.contains("journal FAILED=0") && out.contains("journal UNCERTAIN=0"), out);
    assertTrue(out.contains("attemptsWithAnotherKey=0"), "every attempt carried its order's key:\n" + out);
  }

  /** One WARN when delivery stalled that says the orders stay PENDING; an INFO when it resumed. */
  private static void assertTheLogToldTheTruth(String out) {
    List<String> warns = out.lines().filter(l -> l.contains("WARN")).toList();
    assertFalse(warns.isEmpty(), "the dispatcher said it was offline:\n" + out);
    String offline = warns.get(0);
    assertTrue(offline.contains("OutboxDispatcher") && offline.contains("stay PENDING with their keys"), offline);
    for (String w : warns) {
      assertFalse(w.contains("FAILED") || w.contains("UNCERTAIN"), "nothing ended, and no line says so: " + w);
    }
    assertTrue(out.lines().anyMatch(l -> l.contains("INFO") && l.contains("making progress again")), out);
  }

  private static String figures(String out, String prefix) {
    return out.lines().filter(l -> l.startsWith(prefix)).findFirst().orElse("");
  }

  private static Process startChild(Path log, String... args) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "-Xmx64m", "-XX:TieredStopAtLevel=1", "-cp",
        System.getProperty("java.class.path"), "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
        OutageChild.class.getName()));
    command.addAll(List.of(args));
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  /** Waits (up to 30 s) for the child to print {@code name=<digits>}, and returns the number. */
  private static long awaitFigure(Process child, Path log, String name) throws Exception {
    Pattern p = Pattern.compile(Pattern.quote(name) + "=(\\d+)");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      Matcher m = p.matcher(Files.readString(log));
      if (m.find()) {
        return Long.parseLong(m.group(1));
      }
      if (!child.isAlive()) {
        break;
      }
      Thread.sleep(50);
    }
    throw new AssertionError("the child never printed " + name + ":\n" + Files.readString(log));
  }

  /** The port chosen for the target was bound by someone else before the server could take it. */
  private static final class PortTaken extends Exception {
    private static final long serialVersionUID = 1L;

    PortTaken(Throwable cause) {
      super(cause);
    }
  }
}
