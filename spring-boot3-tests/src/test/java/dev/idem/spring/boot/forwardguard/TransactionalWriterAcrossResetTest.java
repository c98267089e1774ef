package dev.idem.spring.boot.forwardguard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * Regression test (found by a review this session).
 *
 * <p>Review of 71b27dc0 ({@code BufferedResponse} keeps the writer of before the last reset,
 * {@code retired}, flushing into the body, and makes a new one at the next {@code getWriter()}).
 * Tomcat has one writer per response: the one a handler took before {@code reset()} and the one
 * {@code getWriter()} returns after it are the same object, writing into one buffer in the order
 * written. The held response has two, each with its own encoder buffer (up to 8 KiB of text not yet
 * in the body), flushed old first, and remembers only the last one retired. (A Spring MVC
 * controller does not see this: Spring's async-lifecycle wrapper caches the first writer it got. A
 * servlet, or a filter after the guard, does.) A transactional servlet that began an export,
 * failed, reset, and writes its error partly through the writer it holds and partly through
 * {@code getWriter()}:
 * <ul>
 *   <li>"export failed: " through the new writer, then "disk full" through the held one: unguarded,
 *       "export failed: disk full"; guarded, the client gets "disk fullexport failed: ", committed
 *       and replayed to every retry;
 *   <li>a second reset while both exist: text then written through the first writer is never
 *       flushed, so the client gets 422 with an empty body (unguarded: "export failed").
 * </ul>
 */
class TransactionalWriterAcrossResetTest {
  @SpringBootApplication
  static class App {
    @Bean
    ServletRegistrationBean<HttpServlet> order() {
      return new ServletRegistrationBean<>(new HttpServlet() {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse response) throws IOException {
          response.setContentType("text/plain");
          PrintWriter out = response.getWriter();
          out.print("row 1\n");
          response.reset();
          response.setStatus(422);
          response.setContentType("text/plain");
          response.getWriter().print("export failed: ");
          out.print("disk full");
        }
      }, "/rv-tx-order", "/rv-plain-order");
    }

    @Bean
    ServletRegistrationBean<HttpServlet> twice() {
      return new ServletRegistrationBean<>(new HttpServlet() {
        private static final long serialVersionUID = 1L;

        @Override
        protected void service(HttpServletRequest req, HttpServletResponse response) throws IOException {
          response.setContentType("text/plain");
          PrintWriter out = response.getWriter();
          out.print("row 1\n");
          response.reset();
          response.setContentType("text/plain");
          response.getWriter().print("row 1 again\n");
          response.reset();
          response.setStatus(422);
          response.setContentType("text/plain");
          out.print("export failed");
        }
      }, "/rv-tx-twice", "/rv-plain-twice");
    }
  }

  private static ConfigurableApplicationContext run() throws Exception {
    Path dir = Files.createTempDirectory("idem-rv-retired-");
    return new SpringApplicationBuilder(App.class).properties(
        "server.port=0", "idem.client.enabled=false", "idem.outbox.enabled=false",
        "idem.server.store=datasource", "idem.server.transactional=true",
        "idem.server.routes=POST /rv-tx-order,POST /rv-tx-twice",
        "idem.directory=" + dir.resolve("idem"), "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db")).run();
  }

  @Test
  void textWrittenThroughTheHeldAndTheNewWriterKeepsItsOrder() throws Exception {
    try (ConfigurableApplicationContext ctx = run()) {
      check(ctx, "/rv-plain-order", "/rv-tx-order", "k-rv-order", "export failed: disk full");
    }
  }

  @Test
  void textWrittenThroughTheFirstWriterAfterASecondResetIsSent() throws Exception {
    try (ConfigurableApplicationContext ctx = run()) {
      check(ctx, "/rv-plain-twice", "/rv-tx-twice", "k-rv-twice", "export failed");
    }
  }

  private static void check(ConfigurableApplicationContext ctx, String plain, String guarded, String key, String body)
      throws Exception {
    String base = "http://127.0.0.1:" + ctx.getEnvironment().getProperty("local.server.port");
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    HttpResponse<String> unguarded = http.send(HttpRequest.newBuilder(URI.create(base + plain))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(422, unguarded.statusCode(), unguarded.body());
    assertEquals(body, unguarded.body(), "Tomcat's own reset, on a path the guard does not cover");

    HttpRequest request = HttpRequest.newBuilder(URI.create(base + guarded))
        .header("Content-Type", "application/json").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build();
    HttpResponse<String> first = http.send(request, HttpResponse.BodyHandlers.ofString());
    assertEquals(422, first.statusCode(), first.body());
    assertEquals(body, first.body(), "the keyed request's client");
  }
}
