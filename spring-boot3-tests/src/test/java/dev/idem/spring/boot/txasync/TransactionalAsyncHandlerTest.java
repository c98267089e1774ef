package dev.idem.spring.boot.txasync;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.server.Idempotent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * Why: transactional mode commits when the handler method returns. A handler that answers
 * asynchronously ({@code CompletableFuture} here) had its claim, its writes and the answer it had
 * then (the status and an empty body) committed together, and that empty answer replayed to every
 * retry. Such a handler is refused when the app starts, with what to do instead.
 */
class TransactionalAsyncHandlerTest {
  @SpringBootApplication
  @Import(Orders.class)
  static class App {
    @Bean
    AtomicInteger effects() {
      return new AtomicInteger();
    }
  }

  @RestController
  static class Orders {
    private final AtomicInteger effects;

    Orders(AtomicInteger effects) {
      this.effects = effects;
    }

    @PostMapping("/tx-async")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent(transactional = true)
    CompletableFuture<Map<String, Object>> create(@RequestBody Map<String, Object> order) {
      effects.incrementAndGet();
      return CompletableFuture.completedFuture(Map.of("item", order.get("item")));
    }
  }

  @Test
  void anAsyncHandlerInTransactionalModeIsRefusedWhenTheAppStarts() throws Exception {
    Path dir = Files.createTempDirectory("idem-tx-async-");
    SpringApplicationBuilder app = new SpringApplicationBuilder(App.class).properties(
        "server.port=0", "idem.client.enabled=false", "idem.outbox.enabled=false",
        "idem.server.store=datasource", "idem.directory=" + dir.resolve("idem"),
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"));

    Exception e = assertThrows(Exception.class, () -> app.run().close());

    String why = String.valueOf(NestedExceptionUtils.getMostSpecificCause(e).getMessage());
    assertTrue(why.contains("answers asynchronously") && why.contains("Use lease mode"), why);
  }
}
