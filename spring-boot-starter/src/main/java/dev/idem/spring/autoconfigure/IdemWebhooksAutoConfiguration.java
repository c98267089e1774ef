package dev.idem.spring.autoconfigure;

import dev.idem.spring.webhooks.WebhookSubscription;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookListener;
import dev.idem.webhooks.WebhookProcessor;
import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookSource;
import dev.idem.webhooks.metrics.MicrometerWebhookMetrics;
import dev.idem.webhooks.servlet.WebhookServlet;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.ServletRegistration;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.ServletContextInitializer;
import dev.idem.spring.internal.Stores;
import dev.idem.spring.internal.WebhookSourcesCondition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The webhook inbox in a Spring MVC app, when {@code idem.webhooks.sources.*} names at least one
 * sender: an endpoint per source (default {@code /webhooks/NAME}) that verifies a delivery's
 * signature with the source's secrets and stores it durably before answering 2xx, the inbox
 * (embedded SQLite in {@code idem.directory}/webhooks, or PostgreSQL), and the processor that runs
 * the {@link WebhookSubscription} beans, started and stopped with the app. Secrets come from the
 * app's property sources and are never logged.
 */
@AutoConfiguration(after = IdemAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = "jakarta.servlet.Servlet")
@Conditional(WebhookSourcesCondition.class)
public class IdemWebhooksAutoConfiguration {
  /** Makes the auto-configuration; Spring calls it. */
  public IdemWebhooksAutoConfiguration() {}

  /**
   * The inbox.
   *
   * @param properties the settings
   * @param dataSource the app's DataSource, for {@code store=datasource} (PostgreSQL)
   * @return the open inbox; closed at shutdown
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public WebhookInbox idemWebhookInbox(IdemProperties properties, ObjectProvider<DataSource> dataSource) {
    if (properties.webhooks().store() == IdemProperties.Store.DATASOURCE) {
      DataSource ds = Stores.required(dataSource, "idem.webhooks.store");
      return WebhookInbox.postgres(ds).open();
    }
    return WebhookInbox.sqlite(Path.of(properties.directory()).resolve("webhooks")).open();
  }

  /**
   * The processor, running the subscription beans; the lifecycle starts and stops it.
   *
   * @param inbox the inbox
   * @param subscriptions the subscription beans
   * @param listener the webhook listener beans (Idem's metrics, the app's own), every one told
   * @param properties the settings
   * @param environment the environment, for the owner name
   * @return the processor, not started
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public WebhookProcessor idemWebhookProcessor(WebhookInbox inbox, ObjectProvider<WebhookSubscription> subscriptions,
      ObjectProvider<WebhookListener> listener, IdemProperties properties, Environment environment) {
    WebhookProcessor.Builder b = WebhookProcessor.builder(inbox).workers(properties.webhooks().workers());
    Set<String> seen = new HashSet<>();
    for (WebhookSubscription s : subscriptions.orderedStream().toList()) {
      if (!seen.add(s.eventType())) {
        throw new IllegalStateException("two WebhookSubscription beans for event type '" + s.eventType() + "'");
      }
      if (s.eventType().equals(WebhookSubscription.ANY)) {
        b.defaultHandler(s.handler());
      } else {
        b.handler(s.eventType(), s.handler());
      }
    }
    WebhookListener all = every(listener);
    if (all != null) {
      b.listener(all);
    }
    String owner = IdemAutoConfiguration.owner(properties, environment);
    if (owner != null) {
      b.owner(owner);
    }
    return b.build();
  }

  /**
   * Serves one endpoint per source, a servlet mapped on its own path beside the DispatcherServlet.
   * The app's filters mapped on {@code /*} (Boot maps filter beans there) still run before it: one
   * that reads request parameters of a POST ({@code HiddenHttpMethodFilter}, with
   * {@code spring.mvc.hiddenmethod.filter.enabled=true}) makes the container consume a form-encoded
   * body, and the delivery is then refused as badly signed. Two sources on one path, or a path
   * another servlet holds, fail the startup.
   *
   * @param inbox the inbox
   * @param properties the settings
   * @param listener the webhook listener beans (Idem's metrics, the app's own), every one told
   * @param clock a {@link Clock} bean of the app, if any: the sources check signed timestamps
   *     against it (tests pin time with one); else the system clock
   * @return the initializer
   */
  @Bean
  public ServletContextInitializer idemWebhookEndpoints(WebhookInbox inbox, IdemProperties properties,
      ObjectProvider<WebhookListener> listener, ObjectProvider<Clock> clock) {
    List<Map.Entry<String, WebhookReceiver>> receivers = properties.webhooks().sources().entrySet().stream()
        .map(e -> Map.entry(path(e.getKey(), e.getValue()), receiver(e.getKey(), e.getValue(), inbox,
            every(listener), clock.getIfAvailable())))
        .toList();
    Map<String, String> sourceByPath = new HashMap<>();
    for (Map.Entry<String, WebhookReceiver> e : receivers) {
      String other = sourceByPath.putIfAbsent(e.getKey(), e.getValue().source().name());
      if (other != null) {
        // One servlet would get the path and the other source none: its sender's every delivery
        // verified against the wrong secrets and refused, with nothing said at startup.
        throw new IllegalStateException("idem.webhooks.sources." + other + " and idem.webhooks.sources."
            + e.getValue().source().name() + " are both on path " + e.getKey() + "; give each source a path of its own");
      }
    }
    return servletContext -> {
      for (Map.Entry<String, WebhookReceiver> e : receivers) {
        String name = "idemWebhook-" + e.getValue().source().name();
        ServletRegistration.Dynamic r = servletContext.addServlet(name, new WebhookServlet(e.getValue()));
        Set<String> taken = r.addMapping(e.getKey());
        if (!taken.isEmpty()) {
          throw new IllegalStateException("idem.webhooks.sources." + e.getValue().source().name() + ".path "
              + e.getKey() + " is already mapped to another servlet; give the source a path of its own");
        }
      }
    };
  }

  private static String path(String name, IdemProperties.Source s) {
    return s.path() == null || s.path().isBlank() ? "/webhooks/" + name : s.path();
  }

  private static WebhookReceiver receiver(String name, IdemProperties.Source s, WebhookInbox inbox,
      WebhookListener listener, Clock clock) {
    if (s.scheme() == null) {
      throw new IllegalStateException("idem.webhooks.sources." + name + ".scheme is not set (stripe, github or"
          + " standard-webhooks)");
    }
    if (s.secrets().isEmpty() || s.secrets().stream().anyMatch(x -> x == null || x.isBlank())) {
      throw new IllegalStateException("idem.webhooks.sources." + name + ".secrets is empty or has a blank entry;"
          + " give the signing secret (from an environment variable or a secret store)");
    }
    SignatureScheme scheme = switch (s.scheme()) {
      case STRIPE -> SignatureScheme.stripe();
      case GITHUB -> SignatureScheme.github();
      case STANDARD_WEBHOOKS -> SignatureScheme.standardWebhooks();
    };
    WebhookSource.Builder b = WebhookSource.builder(name, scheme).tolerance(s.tolerance());
    if (clock != null) {
      b.clock(clock);
    }
    s.secrets().forEach(b::secret);
    WebhookReceiver.Builder r = WebhookReceiver.builder(b.build(), inbox);
    if (listener != null) {
      r.listener(listener);
    }
    return r.build();
  }

  /** The inbox's meters, when Micrometer is there. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static class Metrics {
    @Bean
    WebhookListener idemWebhookMetrics(ObjectProvider<MeterRegistry> registry, WebhookInbox inbox) {
      MeterRegistry r = registry.getIfAvailable();
      return r == null ? WebhookListener.none() : MicrometerWebhookMetrics.bind(r, inbox);
    }
  }

  /**
   * Every listener bean, told in order, as the client's and the guard's listeners are: an app's own
   * listener (alerts, logs) beside Idem's metrics, not instead of them. Null if there is none.
   */
  private static WebhookListener every(ObjectProvider<WebhookListener> listeners) {
    List<WebhookListener> all = listeners.orderedStream().toList();
    return all.isEmpty() ? null : all.size() == 1 ? all.get(0) : WebhookListener.all(all);
  }
}
