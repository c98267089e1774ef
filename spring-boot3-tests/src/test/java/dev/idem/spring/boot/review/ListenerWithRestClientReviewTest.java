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
import org.springframework.web.client.RestClient;

/**
 * docs/spring.md: "every IdemListener ... bean hears every" event. An app's listener that alerts an
 * on-call channel when an operation ends UNCERTAIN naturally takes Boot's {@code RestClient.Builder}
 * to post its alert. The starter's post-processor wraps that builder with the interceptor, which
 * needs the executor, which is being made right then to collect the listener beans: the app fails
 * to start with a circular reference, although nothing in the app is circular.
 *
 * <p>Expected: the app starts, and a client built from the builder keys its POSTs.
 */
class ListenerWithRestClientReviewTest {
  @Configuration(proxyBeanMethods = false)
  static class AppWithAlerting {
    @Bean
    RestClient.Builder restClientBuilder() {
      return RestClient.builder();
    }

    @Bean
    IdemListener alertOnUncertain(RestClient.Builder builder) {
      RestClient alerts = builder.build();
      return event -> {
        if (event instanceof IdemEvent.Uncertain) {
          alerts.toString(); // the app would post to its alerting endpoint here
        }
      };
    }
  }

  @Test
  void anIdemListenerThatUsesBootsRestClientBuilderLetsTheAppStart(@TempDir Path dir) {
    try (IdempotentServer server = IdempotentServer.start()) {
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
          .withUserConfiguration(AppWithAlerting.class)
          .withPropertyValues("idem.directory=" + dir, "idem.outbox.enabled=false")
          .run(context -> {
            if (context.getStartupFailure() != null) {
              fail("the app did not start: " + chain(context.getStartupFailure()));
            }
            context.getBean(RestClient.Builder.class).build().post().uri(server.url("/orders"))
                .contentType(MediaType.APPLICATION_JSON).body("{\"item\":\"book\"}").retrieve().toBodilessEntity();
            assertEquals(1, server.keysSeen().size(), "the POST was keyed: " + server.recordedRequests());
          });
    }
  }

  private static String chain(Throwable t) {
    Throwable root = t;
    while (root != null && root.getCause() != null) {
      root = root.getCause();
    }
    return root == null ? "null" : root.getClass().getSimpleName() + ": " + root.getMessage();
  }
}
