package dev.idem.spring.boot.forwardguard;

import static org.junit.jupiter.api.Assertions.assertEquals;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.ResponseBody;

/**
 * Regression test (found by a review this session): on Boot 4's embedded Tomcat 11, whose
 * {@code suspendWrappedResponseAfterForward} is on by default, a guarded handler that forwards
 * (Spring MVC's {@code forward:} view name, or {@code request.getRequestDispatcher}) had its answer
 * sent into nothing: the forward ended by unwrapping the guard's held response and finishing the
 * container's, so the first client got 200 with an empty body while the stored 201 "created" was
 * replayed to retries. The starter turns the setting off ({@code TomcatForwards}), as Tomcat 10.1
 * has it. Transactional routes and lease mode alike; passes on Boot 3 before and after.
 */
class ForwardOnBootsTomcatTest {
  @SpringBootApplication
  static class App {
    @Bean
    AtomicInteger effects() {
      return new AtomicInteger();
    }

    @Bean
    Orders orders(AtomicInteger effects) {
      return new Orders(effects);
    }
  }

  @Controller
  static class Orders {
    private final AtomicInteger effects;

    Orders(AtomicInteger effects) {
      this.effects = effects;
    }

    @PostMapping("/fwd-view")
    String create() {
      effects.incrementAndGet();
      return "forward:/fwd-done";
    }

    @PostMapping("/fwd-dispatcher")
    void createThroughDispatcher(HttpServletRequest req, HttpServletResponse resp) throws ServletException, IOException {
      effects.incrementAndGet();
      req.getRequestDispatcher("/fwd-done").forward(req, resp);
    }

    @RequestMapping("/fwd-done")
    @ResponseBody
    ResponseEntity<String> done() {
      return ResponseEntity.status(201).header("Content-Type", "text/plain").body("created");
    }
  }

  private static ConfigurableApplicationContext run(boolean transactional) throws Exception {
    Path dir = Files.createTempDirectory("idem-rv-fwd-");
    return new SpringApplicationBuilder(App.class).properties(
        "server.port=0", "idem.client.enabled=false", "idem.outbox.enabled=false",
        "idem.server.store=datasource", "idem.server.transactional=" + transactional,
        "idem.server.routes=POST /fwd-view,POST /fwd-dispatcher",
        "idem.directory=" + dir.resolve("idem"), "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db")).run();
  }

  @Test
  void aTransactionalHandlerReturningAForwardViewNameAnswersTheFirstClient() throws Exception {
    try (ConfigurableApplicationContext ctx = run(true)) {
      check(ctx, "/fwd-view", "k-tx-view");
    }
  }

  @Test
  void aTransactionalHandlerForwardingThroughTheRequestsDispatcherAnswersTheFirstClient() throws Exception {
    try (ConfigurableApplicationContext ctx = run(true)) {
      check(ctx, "/fwd-dispatcher", "k-tx-dispatcher");
    }
  }

  @Test
  void aLeaseModeHandlerReturningAForwardViewNameAnswersTheFirstClient() throws Exception {
    try (ConfigurableApplicationContext ctx = run(false)) {
      check(ctx, "/fwd-view", "k-lease-view");
    }
  }

  private static void check(ConfigurableApplicationContext ctx, String path, String key) throws Exception {
    AtomicInteger effects = ctx.getBean(AtomicInteger.class);
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
            + ctx.getEnvironment().getProperty("local.server.port") + path))
        .header("Content-Type", "application/json").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}")).build();

    HttpResponse<String> first = http.send(request, HttpResponse.BodyHandlers.ofString());
    assertEquals(201, first.statusCode(), "first client: " + first.body());
    assertEquals("created", first.body(), "first client");

    HttpResponse<String> retried = http.send(request, HttpResponse.BodyHandlers.ofString());
    assertEquals(201, retried.statusCode(), retried.body());
    assertEquals("created", retried.body(), "replay");
    assertEquals(1, effects.get());
  }
}
