package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.event.IdemListener;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.testkit.IdempotentServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The WebClient side of {@link ListenerWithRestClientReviewTest}: an {@link IdemListener} bean that
 * takes Boot's {@code WebClient.Builder} (to post an alert) makes the app fail to start with a
 * circular reference, since wrapping the builder needs the executor, which is being made to
 * collect that listener.
 *
 * <p>Expected: the app starts, and a client built from the builder keys its POSTs.
 */
class ListenerWithWebClientReviewTest {
  @Configuration(proxyBeanMethods = false)
  static class AppWithAlerting {
    @Bean
    WebClient.Builder webClientBuilder() {
      return WebClient.builder();
    }

    @Bean
    IdemListener alertOnUncertain(WebClient.Builder builder) {
      WebClient alerts = builder.build();
      return event -> {
        if (event instanceof IdemEvent.Uncertain) {
          alerts.toString(); // the app would post to its alerting endpoint here
        }
      };
    }
  }

  @Test
  void anIdemListenerThatUsesBootsWebClientBuilderLetsTheAppStart(@TempDir Path dir) {
    try (IdempotentServer server = IdempotentServer.start()) {
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
          .withUserConfiguration(AppWithAlerting.class)
          .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false")
          .run(context -> {
            if (context.getStartupFailure() != null) {
              Throwable root = context.getStartupFailure();
              while (root.getCause() != null) {
                root = root.getCause();
              }
              fail("the app did not start: " + root);
            }
            context.getBean(WebClient.Builder.class).build().post().uri(server.url("/orders"))
                .contentType(MediaType.APPLICATION_JSON).bodyValue("{\"item\":\"book\"}").retrieve().toBodilessEntity()
                .block();
            assertEquals(1, server.keysSeen().size(), "the POST was keyed: " + server.recordedRequests());
          });
    }
  }
}
