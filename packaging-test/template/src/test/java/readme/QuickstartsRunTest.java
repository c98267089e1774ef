package readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs each README quickstart (generated into src/main/java by .ci/packaging-test) as its own
 * program: a child JVM on the app's runtime class path only (the README's dependencies, no test
 * scope), in a fresh working directory, against the test kit's reference idempotent server. A
 * quickstart passes when it exits 0 within a minute, the server received at least one request from
 * it, every one of them carried the same Idempotency-Key, and the server ran the effect exactly
 * once under that key.
 */
class QuickstartsRunTest {
  private static final long TIMEOUT_SECONDS = 60;
  private static IdempotentServer server;

  @BeforeAll
  static void startServer() {
    server = IdempotentServer.start();
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  @TestFactory
  Stream<DynamicTest> everyQuickstartRunsAndCreatesOneEffectUnderOneKey() throws IOException {
    List<String> rows = Files.readAllLines(Path.of("src/test/resources/quickstarts.tsv"), StandardCharsets.UTF_8);
    return rows.stream().map(row -> row.split("\t", -1)).map(c -> {
      String where = c[1] + " lines " + c[2] + "-" + c[4] + " (" + c[5] + ")";
      return DynamicTest.dynamicTest(where, () -> {
        if (c[6].isEmpty()) {
          run(c[0], where, Integer.parseInt(c[2]), Integer.parseInt(c[3]), Integer.parseInt(c[4]));
        } else {
          canary(c[0], where, Integer.parseInt(c[2]), Integer.parseInt(c[3]), Integer.parseInt(c[4]), c[6]);
        }
      });
    });
  }

  /** A canary must fail, and for its own reason: proof that the check it names can fail. */
  private static void canary(String className, String where, int first, int imports, int last, String expect)
      throws Exception {
    try {
      run(className, where, first, imports, last);
    } catch (AssertionError e) {
      if (!e.getMessage().contains(expect)) {
        fail("canary " + where + " failed, but not with \"" + expect + "\": " + e.getMessage(), e);
      }
      System.out.printf("canary %s: rejected as expected (%s)%n", where, expect);
      return;
    }
    fail("canary " + where + " passed: the packaging test can no longer tell \"" + expect + "\"");
  }

  private static void run(String className, String where, int first, int imports, int last) throws Exception {
    Path dir = Files.createTempDirectory(Path.of("target"), className + "-");
    Path output = dir.resolve("output.txt");
    int before = server.recordedRequests().size();
    long effectsBefore = server.totalEffects();
    String classPath = System.getProperty("readme.classes") + File.pathSeparator
        + Files.readString(Path.of(System.getProperty("readme.runtimeClasspathFile"))).strip();
    Process process = new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", classPath,
            "-Dreadme.url=" + server.url("/orders"),
            "readme." + className)
        .directory(dir.toFile())
        .redirectErrorStream(true)
        .redirectOutput(output.toFile())
        .start();
    if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
      fail(where + ": did not finish within " + TIMEOUT_SECONDS + " s; its output:\n"
          + mapped(Files.readString(output), className, where, first, imports, last));
    }
    String out = mapped(Files.readString(output), className, where, first, imports, last);
    if (process.exitValue() != 0) {
      fail(where + ": exited with " + process.exitValue() + "; its output:\n" + out);
    }
    List<ReceivedRequest> requests = server.recordedRequests().subList(before, server.recordedRequests().size());
    if (requests.isEmpty()) {
      fail(where + ": ran, but the server received no request from it; its output:\n" + out);
    }
    List<Optional<String>> keys = requests.stream().map(r -> r.header(IdempotentServer.DEFAULT_KEY_HEADER))
        .collect(Collectors.toList());
    if (keys.stream().anyMatch(Optional::isEmpty)) {
      fail(where + ": sent a request without an " + IdempotentServer.DEFAULT_KEY_HEADER + ": " + requests);
    }
    List<String> distinct = keys.stream().map(Optional::get).map(QuickstartsRunTest::unquoted).distinct()
        .collect(Collectors.toList());
    assertEquals(1, distinct.size(), where + ": its requests carried more than one key: " + distinct);
    String key = distinct.get(0);
    assertEquals(1, server.effectCount(key), where + ": effects under key " + key);
    assertEquals(effectsBefore + 1, server.totalEffects(), where + ": effects at the server during its run");
    System.out.printf("%s: %d request(s) %s %s, all with Idempotency-Key %s; 1 effect at the server%n",
        where, requests.size(), requests.get(0).method(), requests.get(0).path(), key);
  }

  /** The key header may hold an RFC 8941 string ("..."); the server counts effects by the bare key. */
  private static String unquoted(String value) {
    return value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")
        ? value.substring(1, value.length() - 1) : value;
  }

  /** Adds the README line to every "QuickstartN.java:L" of a stack trace (see ReadmeProject.blockLine). */
  private static String mapped(String output, String className, String where, int first, int imports, int last) {
    Matcher m = Pattern.compile(Pattern.quote(className) + "\\.java:(\\d+)").matcher(output);
    StringBuilder sb = new StringBuilder();
    while (m.find()) {
      int l = Integer.parseInt(m.group(1));
      String file = where.substring(0, where.indexOf(" lines "));
      String readme;
      if (l >= 2 && l <= 1 + imports) {
        readme = file + " line " + (first + l - 2);
      } else if (l >= 3 + imports && first + l - 3 <= last) {
        readme = file + " line " + (first + l - 3);
      } else {
        readme = "the wrapper";
      }
      m.appendReplacement(sb, Matcher.quoteReplacement(m.group() + ", " + readme));
    }
    m.appendTail(sb);
    return sb.toString();
  }
}
