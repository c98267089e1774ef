package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemServerAutoConfiguration;
import dev.idem.spring.internal.GuardFilter;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * {@code idem.server.key-header} takes any non-blank string. A value no client can send as a header
 * name ({@code idem.server.key-header=Idempotency-Key:}, the colon copied from a curl line) starts
 * the app; the guard then looks for a header no request has, and answers 400 "Idempotency-Key: is
 * missing" to every keyed request on a guarded route, from the first request on. The same value for
 * {@code idem.client.key-header} fails the startup ("not a valid header name"), and
 * {@code idem.server.caller-header} is checked for exactly this reason ("rather than every keyed
 * request being refused for a header no client can send").
 *
 * <p>Expected: the startup fails naming {@code idem.server.key-header}. Actual: the app starts, and
 * a POST with {@code Idempotency-Key: k-1} on the guarded route is refused 400.
 */
class ServerKeyHeaderNameReviewTest {
  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemServerAutoConfiguration.class));

  @Test
  void aKeyHeaderNoClientCanSendFailsTheStartupNamingTheProperty(@TempDir Path dir) {
    runner.withPropertyValues("idem.directory=" + dir, "idem.client.enabled=false", "idem.outbox.enabled=false",
        "idem.server.routes=POST /orders", "idem.server.key-header=Idempotency-Key:").run(context -> {
          Throwable failure = context.getStartupFailure();
          if (failure == null) {
            MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");
            request.addHeader("Idempotency-Key", "k-1");
            request.setContentType("application/json");
            request.setContent("{}".getBytes());
            MockHttpServletResponse response = new MockHttpServletResponse();
            AtomicInteger ran = new AtomicInteger();
            context.getBean(GuardFilter.class).doFilter(request, response, (q, r) -> ran.incrementAndGet());
            assertNotNull(failure, "idem.server.key-header=Idempotency-Key: started the app; a keyed POST on the"
                + " guarded route was answered " + response.getStatus() + " (handler ran " + ran.get() + " times): "
                + response.getContentAsString());
          }
          StringBuilder messages = new StringBuilder();
          for (Throwable c = failure; c != null; c = c.getCause()) {
            messages.append(c.getMessage()).append('\n');
          }
          assertTrue(messages.toString().contains("idem.server.key-header"), messages.toString());
        });
  }
}
