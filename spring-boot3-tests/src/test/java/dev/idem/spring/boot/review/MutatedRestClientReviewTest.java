package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.client.IdempotentCall;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.MediaType;
import org.springframework.web.client.RestClient;

/**
 * docs/spring.md: "Idem's interceptor and filter are put last in their chains at each build(): the
 * interceptors before them (authentication, tracing) run once and their headers are on every
 * attempt". A client made with {@code restClient.mutate()} (the usual way to derive a client with
 * one more interceptor or default header from a configured one) is built by a plain
 * {@code RestClient.Builder} that already holds Idem's interceptor, so an authentication
 * interceptor the app adds there lands after Idem's. On Spring Framework 6.2 (Boot 3.5), the
 * interceptors after Idem's are skipped by its retries: the second attempt leaves without the
 * Authorization header, which a real API answers 401, and the operation ends FAILED although the
 * first attempt may have taken effect.
 *
 * <p>Expected: every attempt carries the Authorization the app's interceptor adds.
 */
class MutatedRestClientReviewTest {
  @Test
  void anInterceptorAddedThroughMutateIsOnEveryAttempt(@TempDir Path dir) {
    try (IdempotentServer server = IdempotentServer.start()) {
      server.plan().next(Fault.status(503)); // the first attempt is answered 503: the executor retries
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
          .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false")
          .withBean(RestClient.Builder.class, RestClient::builder)
          .run(context -> {
            RestClient base = context.getBean(RestClient.Builder.class).baseUrl(server.url("/").toString()).build();
            RestClient authed = base.mutate()
                .requestInterceptor((request, body, execution) -> {
                  request.getHeaders().setBearerAuth("s3cret");
                  return execution.execute(request, body);
                })
                .build();
            authed.post().uri("/orders").attributes(IdempotentCall.named("create-order"))
                .contentType(MediaType.APPLICATION_JSON).body("{\"item\":\"book\"}").retrieve().toBodilessEntity();

            List<ReceivedRequest> received = server.recordedRequests();
            assertEquals(2, received.size(), "attempts: " + received);
            assertEquals(1, server.keysSeen().size(), "one key on every attempt: " + server.keysSeen());
            for (ReceivedRequest r : received) {
              assertEquals("Bearer s3cret", r.header("Authorization").orElse(null),
                  "an attempt left without the Authorization the app's interceptor adds (Idem's interceptor is not"
                      + " last in a client made with mutate()): " + r);
            }
          });
    }
  }
}
