package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemWebhooksAutoConfiguration;
import dev.idem.webhooks.WebhookActivity;
import dev.idem.webhooks.WebhookListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.Servlet;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletRegistration;
import jakarta.servlet.http.HttpServlet;
import java.nio.file.Path;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.ServletContextInitializer;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * An app's own WebhookListener bean (alerting, logs) beside Actuator's registry: both must hear a
 * delivery, as every IdemListener bean does on the client side and every GuardListener on the
 * guard's. The starter hands the receiver and the processor only the first listener bean.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class WebhookListenersTest {
  /** The app's own listener. */
  private final List<WebhookActivity> heard = new CopyOnWriteArrayList<>();

  private final WebApplicationContextRunner base = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemWebhooksAutoConfiguration.class))
      .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
      .withBean(Clock.class, () -> Clock.fixed(TestApp.VECTORS_NOW, ZoneOffset.UTC));

  /** Control: without a listener of the app's, Idem's meters count the delivery. */
  @Test
  void withoutAnAppListenerIdemsMetersHearADelivery(@TempDir Path dir) throws Exception {
    deliver(base, dir, false);
  }

  @Test
  void theAppsListenerAndIdemsMetersBothHearADelivery(@TempDir Path dir) throws Exception {
    deliver(base.withBean("appWebhookListener", WebhookListener.class, () -> heard::add), dir, true);
  }

  private void deliver(WebApplicationContextRunner runner, Path dir, boolean appListener) {
    WebhookVectors.Vector v = WebhookVectors.playable().stream()
        .filter(x -> x.scheme().equals("stripe") && x.valid()).findFirst().orElseThrow();
    runner.withPropertyValues("idem.directory=" + dir,
        "idem.webhooks.sources.stripe.scheme=stripe",
        "idem.webhooks.sources.stripe.secrets[0]=" + WebhookVectors.secret("stripe")).run(context -> {
          assertTrue(context.getStartupFailure() == null, String.valueOf(context.getStartupFailure()));
          // The endpoint as the container would register it.
          AtomicReference<Servlet> endpoint = new AtomicReference<>();
          ServletContext servletContext = mock(ServletContext.class);
          when(servletContext.addServlet(anyString(), any(Servlet.class))).thenAnswer(inv -> {
            endpoint.set(inv.getArgument(1));
            return mock(ServletRegistration.Dynamic.class);
          });
          context.getBean("idemWebhookEndpoints", ServletContextInitializer.class).onStartup(servletContext);

          MockHttpServletRequest request = new MockHttpServletRequest("POST", "/webhooks/stripe");
          v.headers().forEach(request::addHeader);
          request.setContent(v.body());
          MockHttpServletResponse response = new MockHttpServletResponse();
          ((HttpServlet) endpoint.get()).service(request, response);
          assertEquals(2, response.getStatus() / 100, response.getContentAsString());

          if (appListener) {
            assertTrue(heard.stream().anyMatch(a -> a instanceof WebhookActivity.Accepted),
                "the app's listener heard: " + heard);
          }
          Counter accepted = context.getBean(MeterRegistry.class).find("idem.webhooks.accepted").counter();
          assertNotNull(accepted, "no idem.webhooks.accepted counter: Idem's webhook metrics never heard the delivery");
          assertEquals(1.0, accepted.count());
        });
  }
}
