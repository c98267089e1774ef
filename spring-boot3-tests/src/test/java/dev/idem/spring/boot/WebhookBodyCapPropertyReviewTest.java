package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemWebhooksAutoConfiguration;
import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import jakarta.servlet.Servlet;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletRegistration;
import jakarta.servlet.http.HttpServlet;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.ServletContextInitializer;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * Review: the starter's webhook endpoints take the library's default body cap, 1 MiB, and offer
 * no property to change it: {@code idem.webhooks.sources.NAME.*} is {@code scheme}, {@code secrets},
 * {@code path}, {@code tolerance} (docs/spring.md), and a {@code max-body-bytes} under it fails
 * the startup as an unknown property. docs/spring.md's own example wires GitHub, whose deliveries
 * reach 25 MB (a push of many commits, a large pull request): each one over 1 MiB is answered 413,
 * and GitHub does not redeliver on its own, so the event is lost for the app. The only way out is
 * to replace the starter's receivers bean (which has no {@code @ConditionalOnMissingBean}).
 */
class WebhookBodyCapPropertyReviewTest {
  @Test
  void aGitHubSourceCanTakeDeliveriesOverOneMebibyte(@TempDir Path dir) {
    String secret = "github-webhook-secret";
    String pad = "x".repeat(2 << 20);
    byte[] body = WebhookSigner.jsonEvent("d-1", "push", "{\"pad\":\"" + pad + "\"}");
    WebhookDelivery d = WebhookSigner.GITHUB.sign(secret, "6a1f3c1e-0000-4000-8000-000000000001", "push",
        Instant.now(), body);
    new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemWebhooksAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.webhooks.sources.github.scheme=github",
            "idem.webhooks.sources.github.secrets[0]=" + secret,
            "idem.webhooks.sources.github.max-body-bytes=26214400")
        .run(context -> {
          assertTrue(context.getStartupFailure() == null, String.valueOf(context.getStartupFailure()));
          AtomicReference<Servlet> endpoint = new AtomicReference<>();
          ServletContext servletContext = mock(ServletContext.class);
          when(servletContext.addServlet(anyString(), any(Servlet.class))).thenAnswer(inv -> {
            endpoint.set(inv.getArgument(1));
            return mock(ServletRegistration.Dynamic.class);
          });
          context.getBean("idemWebhookEndpoints", ServletContextInitializer.class).onStartup(servletContext);
          MockHttpServletRequest request = new MockHttpServletRequest("POST", "/webhooks/github");
          d.headers().forEach(request::addHeader);
          request.setContentType("application/json");
          request.setContent(d.body());
          MockHttpServletResponse response = new MockHttpServletResponse();
          ((HttpServlet) endpoint.get()).service(request, response);
          assertEquals(200, response.getStatus(), "a 2 MiB GitHub delivery, the source configured for 25 MB: "
              + response.getContentAsString());
        });
  }

  @Test
  void aCapBelowOneByteFailsTheStartupNamingTheKey(@TempDir Path dir) {
    new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemWebhooksAutoConfiguration.class))
        .withPropertyValues("idem.directory=" + dir, "idem.webhooks.sources.github.scheme=github",
            "idem.webhooks.sources.github.secrets[0]=github-webhook-secret",
            "idem.webhooks.sources.github.max-body-bytes=0")
        .run(context -> {
          assertTrue(context.getStartupFailure() != null, "a cap of 0 bytes would refuse every delivery");
          String all = "";
          for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
            all += t.getMessage() + "\n";
          }
          assertTrue(all.contains("idem.webhooks.sources.github.max-body-bytes is 0"), all);
        });
  }
}
