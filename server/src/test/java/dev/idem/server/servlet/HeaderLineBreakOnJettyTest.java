package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.JdbcIdempotencyStore;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Regression test for a defect found by review, described as it was; fixed: the guard stores control characters as spaces ({@code StoredHeaderValue}).
 *
 * <p>End to end on Jetty 12 with the SQLite store: a servlet that echoes a client-chosen reference
 * into {@code Location} (a line break in it, as a hostile or buggy client sends). Jetty writes the
 * live answer's value with the line break made harmless, one {@code Location} and no cookie; the
 * guard stored the raw value as one {@code name:value} text line per value ({@code HeaderCodec}),
 * so its replay splits it and sends a {@code Set-Cookie} the handler never set (the guard's own
 * rule keeps every {@code Set-Cookie} out of its store). The replay differs from the first answer,
 * and carries a header chosen by request input.
 */
class HeaderLineBreakOnJettyTest {
  @TempDir
  Path dir;

  private final AtomicInteger runs = new AtomicInteger();
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void theReplayCarriesTheHeadersOfTheFirstAnswerAndNoOther() throws Exception {
    HttpServlet servlet = new HttpServlet() {
      @Override
      protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        runs.incrementAndGet();
        String ref = new String(req.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        resp.setStatus(201);
        resp.setHeader("Location", "/orders/" + ref);
        resp.setContentType("text/plain");
        resp.getOutputStream().write("created".getBytes(StandardCharsets.UTF_8));
      }
    };
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(dir.resolve("idem.db"));
        IdempotencyGuard guard = IdempotencyGuard.builder(store).purgeInterval(null).build();
        PlainAndGuardedJetty jetty = PlainAndGuardedJetty.start(servlet, guard)) {
      HttpRequest post = HttpRequest.newBuilder(jetty.base.resolve("/guarded/orders"))
          .header("Idempotency-Key", "k-lf").header("Content-Type", "text/plain")
          .POST(HttpRequest.BodyPublishers.ofString("r1\nSet-Cookie: SESSION=planted; Path=/")).build();

      HttpResponse<String> first = http.send(post, HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> replay = http.send(post, HttpResponse.BodyHandlers.ofString());

      assertEquals(201, first.statusCode());
      assertTrue(first.headers().allValues("Set-Cookie").isEmpty(), "the live answer: " + first.headers().map());
      assertEquals("true", replay.headers().firstValue("Idempotent-Replayed").orElse(null));
      assertEquals(1, runs.get());
      assertEquals(first.headers().allValues("Set-Cookie"), replay.headers().allValues("Set-Cookie"),
          "the replay sends a cookie the first answer did not: " + replay.headers().map());
      assertEquals(first.headers().allValues("Location"), replay.headers().allValues("Location"));
    }
  }
}
