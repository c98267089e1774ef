package dev.idem.spring.boot.reactive;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.client.BufferingClientHttpRequestFactory;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.util.ClassUtils;
import org.springframework.web.client.RestTemplate;

/**
 * a28866af bounds a keyed attempt of a RestTemplate bean by lowering the HttpURLConnection's
 * timeouts, but only when the bean's factory is exactly a SimpleClientHttpRequestFactory
 * (KeyedAttemptTimeouts.bound: {@code factory instanceof SimpleClientHttpRequestFactory}). The same
 * HttpURLConnection, behind any wrapper, stays unbounded:
 * <ul>
 *   <li>Boot's own RestTemplateBuilder with {@code spring.http.client.factory=simple} (Boot 3.4+):
 *   the starter's KeyedRedirects already wrapped the factory builder, so the template's factory is
 *   the redirect-routing lambda over two simple factories;</li>
 *   <li>{@code new RestTemplate(new BufferingClientHttpRequestFactory(new SimpleClientHttpRequestFactory()))},
 *   the usual set-up for a logging interceptor that reads the response body.</li>
 * </ul>
 * Here: attempt-timeout 1s, 1 attempt; the target holds the request 20 s. Expected: the call ends
 * within 8 s (as with a plain new RestTemplate()). Actual: it waits until the target lets go.
 */
class RestTemplateWrappedSimpleFactoryReviewTest {
  private HttpServer server;
  private ExecutorService handlers;
  private final CountDownLatch release = new CountDownLatch(1);

  @BeforeEach
  void start() throws Exception {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    handlers = Executors.newCachedThreadPool();
    server.setExecutor(handlers);
    server.createContext("/orders", exchange -> {
      exchange.getRequestBody().readAllBytes();
      try {
        release.await(20, TimeUnit.SECONDS); // a target that took the request and never answers
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      exchange.close();
    });
    server.start();
  }

  @AfterEach
  void stop() {
    release.countDown();
    server.stop(0);
    handlers.shutdownNow();
  }

  @Test
  void attemptTimeoutBoundsAKeyedCallOfBootsRestTemplateBuilderOnTheSimpleFactory(@TempDir Path dir) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(present(BOOT_AUTO_CONFIGURATIONS)))
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false", "idem.client.attempt-timeout=1s",
            "idem.client.max-attempts=1", "spring.http.client.factory=simple",
            "spring.http.clients.imperative.factory=simple") // Boot 3.5's name, Boot 4.0's
        .withUserConfiguration(BuilderTemplate.class)
        .run(context -> assertBounded(context, "a RestTemplate bean from Boot's RestTemplateBuilder"
            + " (spring.http.client.factory=simple)"));
  }

  @Test
  void attemptTimeoutBoundsAKeyedCallOfASimpleFactoryBehindABufferingFactory(@TempDir Path dir) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false", "idem.client.attempt-timeout=1s",
            "idem.client.max-attempts=1")
        .withBean(RestTemplate.class,
            () -> new RestTemplate(new BufferingClientHttpRequestFactory(new SimpleClientHttpRequestFactory())))
        .run(context -> assertBounded(context, "new RestTemplate(new BufferingClientHttpRequestFactory("
            + "new SimpleClientHttpRequestFactory()))"));
  }

  /** Boot's HTTP client and RestTemplate auto-configurations: Boot 3.5's names, then Boot 4.0's. */
  private static final List<String> BOOT_AUTO_CONFIGURATIONS = List.of(
      "org.springframework.boot.autoconfigure.http.client.HttpClientAutoConfiguration",
      "org.springframework.boot.autoconfigure.web.client.RestTemplateAutoConfiguration",
      "org.springframework.boot.http.client.autoconfigure.HttpClientAutoConfiguration",
      "org.springframework.boot.http.client.autoconfigure.imperative.ImperativeHttpClientAutoConfiguration",
      "org.springframework.boot.restclient.autoconfigure.RestTemplateAutoConfiguration");
  /** Boot 3.5's and Boot 4.0's names of RestTemplateBuilder. */
  private static final List<String> BUILDER = List.of("org.springframework.boot.web.client.RestTemplateBuilder",
      "org.springframework.boot.restclient.RestTemplateBuilder");

  private static Class<?>[] present(List<String> names) {
    ClassLoader loader = RestTemplateWrappedSimpleFactoryReviewTest.class.getClassLoader();
    return names.stream().filter(n -> ClassUtils.isPresent(n, loader))
        .map(n -> ClassUtils.resolveClassName(n, loader)).toArray(Class<?>[]::new);
  }

  @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
  static class BuilderTemplate {
    /** As a service does: {@code restTemplateBuilder.build()} (Boot's builder, reached by its name). */
    @org.springframework.context.annotation.Bean
    RestTemplate restTemplate(ListableBeanFactory beans) throws ReflectiveOperationException {
      Class<?> type = present(BUILDER)[0];
      return (RestTemplate) type.getMethod("build").invoke(beans.getBean(type));
    }
  }

  private void assertBounded(ApplicationContext context, String what) {
    RestTemplate template = context.getBean(RestTemplate.class);
    HttpHeaders headers = new HttpHeaders();
    headers.setContentType(MediaType.APPLICATION_JSON);
    long start = System.nanoTime();
    Object result;
    try {
      result = template.postForEntity("http://127.0.0.1:" + server.getAddress().getPort() + "/orders",
          new HttpEntity<>("{\"qty\":1}", headers), String.class);
    } catch (RuntimeException e) {
      result = e;
    }
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertTrue(ms < 8_000, "with idem.client.attempt-timeout=1s and 1 attempt, the keyed POST of " + what
        + " (factory " + template.getRequestFactory() + ") took " + ms + " ms (until the target let go): " + result);
  }
}
