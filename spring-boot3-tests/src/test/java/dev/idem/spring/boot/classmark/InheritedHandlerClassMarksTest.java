package dev.idem.spring.boot.classmark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Two controllers that inherit one handler method from a base class, each marked on its class
 * with its own settings, are each guarded by their own: the handler's {@link java.lang.reflect.Method}
 * is the same for both, and a guard chosen by it alone would be the one built first for both.
 * Here one controller requires a key and the other does not: an unkeyed POST runs the second's
 * handler and is refused by the first's.
 */
class InheritedHandlerClassMarksTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  static final AtomicInteger OPTIONAL_RUNS = new AtomicInteger();
  static final AtomicInteger REQUIRED_RUNS = new AtomicInteger();

  @TempDir
  Path dir;

  @Test
  void eachControllerIsGuardedByItsOwnClassMark() throws Exception {
    OPTIONAL_RUNS.set(0);
    REQUIRED_RUNS.set(0);
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).properties(
        "server.port=0",
        "idem.directory=" + dir.resolve("idem"),
        "spring.datasource.url=jdbc:sqlite:" + dir.resolve("app.db"),
        "idem.client.enabled=false",
        "idem.outbox.enabled=false").run()) {
      String base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");

      HttpResponse<String> optional = post(base + "/optional/items");
      HttpResponse<String> required = post(base + "/required/items");

      assertEquals(1, OPTIONAL_RUNS.get(), "an unkeyed POST to the keyRequired=false controller ran its handler"
          + " (answer " + optional.statusCode() + ": " + optional.body() + ")");
      assertEquals(0, REQUIRED_RUNS.get(), "an unkeyed POST to the key-requiring controller ran nothing"
          + " (answer " + required.statusCode() + ": " + required.body() + ")");
      assertEquals(400, required.statusCode(), required.body());
    }
  }

  private static HttpResponse<String> post(String url) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "text/plain")
        .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import({OptionalKeyItems.class, RequiredKeyItems.class})
  static class App {}

  abstract static class Items {
    @PostMapping("/items")
    public String create(@RequestBody String body) {
      return "item " + runs().incrementAndGet();
    }

    abstract AtomicInteger runs();
  }

  @RestController
  @RequestMapping("/optional")
  @Idempotent(keyRequired = false)
  static class OptionalKeyItems extends Items {
    @Override
    AtomicInteger runs() {
      return OPTIONAL_RUNS;
    }
  }

  @RestController
  @RequestMapping("/required")
  @Idempotent
  static class RequiredKeyItems extends Items {
    @Override
    AtomicInteger runs() {
      return REQUIRED_RUNS;
    }
  }
}
