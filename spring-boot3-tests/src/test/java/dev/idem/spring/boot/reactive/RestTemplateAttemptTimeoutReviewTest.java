package dev.idem.spring.boot.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
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
import org.springframework.http.HttpEntity;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.client.RestTemplate;

/**
 * {@code idem.client.attempt-timeout} is "the longest one attempt may take before it is abandoned
 * as ambiguous and retried with the same key" (IdemProperties, docs/spring.md). On the synchronous
 * path the executor enforces it by interrupting the sending thread (docs/client.md, "A timeout per
 * attempt"), which stops java.net.http and Reactor Netty, but not HttpURLConnection: a
 * {@code RestTemplate} bean made with {@code new RestTemplate()} (whose request factory is Spring's
 * {@code SimpleClientHttpRequestFactory}, HttpURLConnection with no read timeout), which the starter
 * keys like any other, stays blocked on a target that took the request and never answers, whatever
 * the attempt timeout; the OkHttp adapter lowers the read timeout for this reason, the Spring
 * interceptor does nothing. (With the JDK and Reactor factories the same call ends in about 2 s.)
 *
 * <p>Here: attempt-timeout 1s, 2 attempts; the target holds each request 10 s. Expected: the call
 * ends (UNCERTAIN) within 8 s (about 2 s with the JDK factory). Actual: it waits until the target lets go.
 */
class RestTemplateAttemptTimeoutReviewTest {
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
        release.await(10, TimeUnit.SECONDS); // a target that took the request and never answers
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
  void attemptTimeoutBoundsAKeyedCallOfAPlainRestTemplateBean(@TempDir Path dir) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false", "idem.client.attempt-timeout=1s",
            "idem.client.max-attempts=2")
        .withBean(RestTemplate.class, RestTemplate::new)
        .run(context -> {
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
          assertTrue(ms < 8_000, "with idem.client.attempt-timeout=1s and 2 attempts, the keyed POST of a"
              + " new RestTemplate() bean took " + ms + " ms (until the target let go): " + result);
          // Both attempts were cut short as ambiguous (they reached the target), with one key.
          List<OperationRecord> uncertain = context.getBean(IdempotentExecutor.class).journal()
              .findByState(OperationState.UNCERTAIN, null, 10);
          assertEquals(1, uncertain.size(), String.valueOf(uncertain));
          assertEquals(List.of(Classification.AMBIGUOUS, Classification.AMBIGUOUS),
              uncertain.get(0).attempts().stream().map(AttemptRecord::classification).toList(), uncertain.toString());
        });
  }
}
