package dev.idem.examples.badinput;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15: credentials planted in every form a request can carry them never reach the embedded
 * journal's files nor any log line at TRACE, while the server still receives them on every live
 * attempt and, after a restart, from the app's own interceptor. Before the default rule, X-Api-Key
 * and its kind were journaled in clear, and so was a query string's {@code api_key}.
 */
class SecretsTest {
  /** Header name to planted value; each value is a marker no key, hash or timestamp can contain. */
  static final Map<String, String> PLANTED_HEADERS = new LinkedHashMap<>();
  static final String APP_NAMED_HEADER = "X-Merchant-Pin";
  static final String PLANTED_QUERY_API_KEY = "qzPLANTquery01apikey";
  static final String PLANTED_QUERY_TOKEN = "qzPLANTquery02token";

  static {
    PLANTED_HEADERS.put("Authorization", "Bearer qzPLANT01authorization");
    PLANTED_HEADERS.put("Proxy-Authorization", "Basic qzPLANT02proxyauth");
    PLANTED_HEADERS.put("Cookie", "sid=qzPLANT03cookie; theme=dark");
    PLANTED_HEADERS.put("Set-Cookie", "sid=qzPLANT04setcookie");
    PLANTED_HEADERS.put("X-Api-Key", "qzPLANT05apikeydash");
    PLANTED_HEADERS.put("X-ApiKey", "qzPLANT06apikey");
    PLANTED_HEADERS.put("X-Auth-Token", "qzPLANT07token");
    PLANTED_HEADERS.put("X-Client-Secret", "qzPLANT08secret");
    PLANTED_HEADERS.put("X-Password", "qzPLANT09password");
    PLANTED_HEADERS.put("X-Session-Id", "qzPLANT10session");
    PLANTED_HEADERS.put("X-Hub-Signature-256", "sha256=qzPLANT11signature");
    PLANTED_HEADERS.put("X-Custom-Auth", "qzPLANT12auth");
    PLANTED_HEADERS.put("X_Api_Key", "qzPLANT13underscore");
    PLANTED_HEADERS.put(APP_NAMED_HEADER, "qzPLANT14appnamed");
    // Not secret by name: left out because its URL carries one (journaled in clear before).
    PLANTED_HEADERS.put("Referer", "https://app.example/cb?state=1&access_token=qzPLANT15referer");
  }

  static List<String> markers() {
    List<String> all = new ArrayList<>();
    PLANTED_HEADERS.values().forEach(v -> all.add(v.replaceAll("^.*(qzPLANT\\w+).*$", "$1")));
    all.add(PLANTED_QUERY_API_KEY);
    all.add(PLANTED_QUERY_TOKEN);
    return all;
  }

  @Test
  void noPlantedCredentialReachesTheJournalFilesOrAnyLogLine(@TempDir Path tmp) throws Exception {
    Path journalDir = tmp.resolve("journal");
    List<String> markers = markers();
    assertEquals(17, markers.size());
    try (IdempotentServer server = IdempotentServer.start()) {
      server.plan().next(Fault.status(503));
      String base = server.url("/").toString().replaceAll("/$", "");
      Path log = tmp.resolve("child.log");
      Process p = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-Xshare:auto",
          "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
          "-Dorg.slf4j.simpleLogger.defaultLogLevel=trace", SecretsChild.class.getName(), journalDir.toString(), base)
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor();
      }
      String out = Files.readString(log);
      assertEquals(0, p.exitValue(), out);
      assertTrue(out.contains("RESULT live 201"), out);
      assertTrue(out.contains("RESULT queued PENDING"), out);
      assertTrue(out.contains("RESULT query-api-key refused"), out);
      assertTrue(out.contains("RESULT query-access-token refused"), out);
      assertTrue(out.contains("RESULT resumed 201"), out);
      // The logger really was at TRACE and Idem really logged (the retry after the 503, the journal).
      assertTrue(out.contains("DEBUG dev.idem"), out);

      // The server: one effect per operation, the same key on every attempt, the credentials on the
      // wire live, and Authorization re-applied by the app after the restart.
      List<ReceivedRequest> received = server.recordedRequests();
      assertEquals(3, received.size(), received.toString());
      assertEquals(2, server.keysSeen().size());
      for (String key : server.keysSeen()) {
        assertEquals(1, server.effectCount(key), key);
      }
      assertEquals(received.get(0).keyHeader(), received.get(1).keyHeader());
      for (int i = 0; i < 2; i++) {
        for (Map.Entry<String, String> h : PLANTED_HEADERS.entrySet()) {
          assertEquals(List.of(h.getValue()), received.get(i).headerValues(h.getKey()), h.getKey());
        }
      }
      assertEquals(List.of(PLANTED_HEADERS.get("Authorization")), received.get(2).headerValues("Authorization"));
      assertTrue(received.stream().noneMatch(r -> r.path().contains("PLANT")));

      List<String> hits = new ArrayList<>();
      int files = 0;
      try (Stream<Path> walk = Files.walk(journalDir)) {
        for (Path f : walk.filter(Files::isRegularFile).toList()) {
          files++;
          String bytes = new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1);
          markers.stream().filter(bytes::contains).forEach(m -> hits.add(f.getFileName() + ": " + m));
        }
      }
      assertTrue(files >= 2, "the journal directory should hold the database and its companions");
      out.lines().forEach(line -> markers.stream().filter(line::contains).forEach(m -> hits.add("log: " + line)));
      assertEquals(List.of(), hits, "planted credentials found");
    }
  }
}
