package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Review (testkit): docs/testkit.md and {@link IdempotentServerMain}'s Javadoc say the program
 * "serves until Ctrl-C or SIGTERM" and "Exit status: 0 after a normal stop, 1 if the port cannot be
 * bound, 2 on bad usage". Ctrl-C and SIGTERM are the only ways to stop it, yet a real process
 * stopped by SIGTERM exits 143 (128 + SIGTERM): the JVM's status for a signal, since the shutdown
 * hook never sets one. A script or CI step that runs the reference server, kills it and checks the
 * documented status sees a failure. The in-JVM tests of the program call run(...) and never stop
 * a real process, so they cannot see it.
 */
class IdempotentServerMainSigtermReviewTest {
  @Test
  void aServerStoppedBySigtermPrintsItsSummaryAndExitsZeroAsDocumented() throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
        IdempotentServerMain.class.getName(), "--port", "0").redirectErrorStream(true).start();
    try {
      // Every line the child prints, read on a thread of its own: the stream is closed once it exits.
      BlockingQueue<String> lines = new LinkedBlockingQueue<>();
      Thread reader = new Thread(() -> {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line = out.readLine(); line != null; line = out.readLine()) {
            lines.add(line);
          }
        } catch (java.io.IOException e) {
          lines.add("(read failed: " + e + ")");
        }
      }, "child-stdout");
      reader.setDaemon(true);
      reader.start();
      String first = lines.poll(60, TimeUnit.SECONDS);
      Matcher m = Pattern.compile("listening on (http://\\S+) ").matcher(String.valueOf(first));
      assertTrue(m.find(), "the address line: " + first);
      URI url = URI.create(m.group(1)).resolve("/orders");
      assertEquals(201, new TestClient(Duration.ofSeconds(10)).post(url, "k-1", "{\"sku\":\"A1\"}").status());

      // SIGTERM, as `kill PID` or a container stop sends (Process.destroy() would close our end of the pipe).
      assertEquals(0, new ProcessBuilder("kill", "-TERM", Long.toString(p.pid())).start().waitFor());
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "stopped");
      reader.join(TimeUnit.SECONDS.toMillis(30));
      List<String> rest = new ArrayList<>(lines);
      assertTrue(rest.contains("stopped after 1 request(s) and 1 effect(s)"), "the summary: " + rest);
      assertEquals(0, p.exitValue(), "docs: exit status 0 after a normal stop (Ctrl-C or SIGTERM); printed " + rest);
    } finally {
      p.destroyForcibly();
    }
  }
}
