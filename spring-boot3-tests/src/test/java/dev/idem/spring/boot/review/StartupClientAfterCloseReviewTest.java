package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.client.IdempotencyInterceptor;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * A client built in a bean's factory method during startup (the ordinary
 * {@code this.client = builder.build()} of a service) gets Idem's stand-in (DeferredInterceptor,
 * or the WebClient filter "made at first use"), which looks Idem's interceptor or executor up at the
 * client's first request. If that first request comes after the context closed (a thread of the
 * app's that outlives it), the lookup runs on the closed bean factory, whose singleton registry
 * takes creations again once its destruction ended: it makes the beans again. With the app's own
 * executor and interceptor beans (which the starter uses when declared), a new executor is made
 * that nothing will ever close, and the POST goes out through it after shutdown. With the app's own
 * executor and a WebClient, a new executor (and a new journal pool) is made, and the call then
 * fails on Spring's "has been closed already" from the properties binder, naming nothing of Idem.
 * (With the starter's own beans, only that binder error stops it, before any Idem bean is made.)
 *
 * <p>Expected: a request after close fails without making any executor: the factory ran once,
 * the call fails saying that the Spring context that made Idem's executor has closed, and nothing
 * reached the server. The same for a RestTemplate bean, which gets the same stand-in.
 */
class StartupClientAfterCloseReviewTest {
  @Configuration(proxyBeanMethods = false)
  static class AppWithOwnExecutor {
    @Bean(destroyMethod = "close")
    IdempotentExecutor appExecutor(AtomicInteger made) {
      made.incrementAndGet();
      return IdempotentExecutor.builder().journal(new InMemoryJournal()).build();
    }

    @Bean
    IdempotencyInterceptor appInterceptor(IdempotentExecutor executor) {
      return IdempotencyInterceptor.builder(executor).build();
    }

    @Bean
    RestClient.Builder restClientBuilder() {
      return RestClient.builder();
    }

    @Bean
    WebClient.Builder webClientBuilder() {
      return WebClient.builder();
    }

    @Bean
    RestClient ordersRestClient(RestClient.Builder builder) {
      return builder.build(); // during startup: before the context's singletons are all made
    }

    @Bean
    WebClient ordersWebClient(WebClient.Builder builder) {
      return builder.build();
    }

    @Bean
    RestTemplate ordersRestTemplate() {
      return new RestTemplate(); // post-processed during startup: gets the same stand-in
    }
  }

  @Test
  void aRestClientBuiltAtStartupAndUsedAfterCloseMakesNoNewExecutor(@TempDir Path dir) throws Exception {
    assertNothingMadeOrSentAfterClose(dir, "ordersRestClient", RestClient.class, (client, url) -> client.post()
        .uri(url).contentType(MediaType.APPLICATION_JSON).body("{\"item\":\"book\"}").retrieve().toBodilessEntity());
  }

  @Test
  void aWebClientBuiltAtStartupAndUsedAfterCloseMakesNoNewExecutor(@TempDir Path dir) throws Exception {
    assertNothingMadeOrSentAfterClose(dir, "ordersWebClient", WebClient.class, (client, url) -> client.post()
        .uri(url).contentType(MediaType.APPLICATION_JSON).bodyValue("{\"item\":\"book\"}").retrieve()
        .toBodilessEntity().block(Duration.ofSeconds(10)));
  }

  @Test
  void aRestTemplateBeanUsedAfterCloseMakesNoNewExecutor(@TempDir Path dir) throws Exception {
    assertNothingMadeOrSentAfterClose(dir, "ordersRestTemplate", RestTemplate.class,
        (client, url) -> client.postForEntity(url, "{\"item\":\"book\"}", String.class));
  }

  /**
   * Starts the app, takes the client bean it built during startup, closes the context, then makes
   * one POST through the client: it must fail saying the context closed, with no executor made
   * again and nothing sent.
   */
  private static <C> void assertNothingMadeOrSentAfterClose(Path dir, String bean, Class<C> type,
      BiConsumer<C, URI> call) throws Exception {
    AtomicInteger made = new AtomicInteger();
    AtomicReference<C> client = new AtomicReference<>();
    start(dir, made, context -> client.set(context.getBean(bean, type)));
    try (MockWebServer server = new MockWebServer()) {
      server.start();
      server.enqueue(new MockResponse.Builder().code(201).body("{}").build());
      RuntimeException thrown = null;
      try {
        call.accept(client.get(), server.url("/orders").uri());
      } catch (RuntimeException e) {
        thrown = e;
      }
      assertEquals(1, made.get(), "a request after the context closed made a new executor that nothing closes"
          + " (the call " + (thrown == null ? "went through" : "failed: " + thrown) + ")");
      assertEquals(0, server.getRequestCount(), "a POST went out after the context closed");
      assertClosedContext(thrown);
    }
  }

  /** The call failed, saying why: the context that made Idem's executor has closed. */
  private static void assertClosedContext(RuntimeException thrown) {
    assertNotNull(thrown, "the call after close did not fail");
    Throwable cause = thrown;
    while (cause != null && !(cause instanceof IllegalStateException
        && String.valueOf(cause.getMessage()).contains("Spring context that made Idem's executor has closed"))) {
      cause = cause.getCause();
    }
    assertNotNull(cause, "the failure does not say that the context closed: " + thrown);
    assertTrue(cause.getMessage().contains("not sent"), cause.getMessage());
  }

  private static void start(Path dir, AtomicInteger made,
      java.util.function.Consumer<org.springframework.context.ApplicationContext> take) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withUserConfiguration(AppWithOwnExecutor.class)
        .withBean(AtomicInteger.class, () -> made)
        .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false")
        .run(context -> {
          assertNull(context.getStartupFailure());
          take.accept(context);
        }); // the runner closes the context here
  }
}
