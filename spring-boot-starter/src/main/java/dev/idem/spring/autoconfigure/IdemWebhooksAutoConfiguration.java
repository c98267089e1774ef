package dev.idem.spring.autoconfigure;

import dev.idem.spring.webhooks.WebhookSubscription;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookListener;
import dev.idem.webhooks.WebhookProcessor;
import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookSource;
import dev.idem.webhooks.metrics.MicrometerWebhookMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.ServletRegistration;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.web.servlet.ServletContextInitializer;
import dev.idem.spring.internal.Stores;
import dev.idem.spring.internal.WebhookEndpoints;
import dev.idem.spring.internal.WebhookSourcesCondition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * The webhook inbox in a Spring MVC app, when {@code idem.webhooks.sources.*} names at least one
 * sender: an endpoint per source (default {@code /webhooks/NAME}) that verifies a delivery's
 * signature over its raw body with the source's secrets and stores it durably before answering
 * 2xx, served by a filter ahead of the app's filters and of Spring Security's (see
 * {@link #idemWebhookFilter} for why); the inbox (embedded SQLite in {@code idem.directory}/webhooks,
 * or PostgreSQL); and the processor that runs the {@link WebhookSubscription} beans, started and
 * stopped with the app. Secrets come from the app's property sources and are never logged.
 */
@AutoConfiguration(after = IdemAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = "jakarta.servlet.Servlet")
@Conditional(WebhookSourcesCondition.class)
public class IdemWebhooksAutoConfiguration {
  /**
   * The endpoints' filter order: {@link Ordered#HIGHEST_PRECEDENCE} + 2. That is ahead of every
   * filter Boot, Spring Security (-100) or Spring Session (HIGHEST_PRECEDENCE + 50) registers:
   * {@code HiddenHttpMethodFilter} (-10000) and {@code FormContentFilter} (-9900) parse a
   * form-encoded body as parameters, and Spring Security's CSRF check asks a POST for its token
   * parameter, any of which leaves the body empty for a signature check behind it. It is behind
   * only Boot's {@code CharacterEncodingFilter} ({@link Ordered#HIGHEST_PRECEDENCE}) and its
   * observation filter ({@link Ordered#HIGHEST_PRECEDENCE} + 1), which read no body: deliveries
   * are still timed in {@code http.server.requests} and traced. A filter of the app's own that must
   * see deliveries first (an address allow-list) takes an order below this one.
   */
  public static final int FILTER_ORDER = Ordered.HIGHEST_PRECEDENCE + 2;

  /** Makes the auto-configuration; Spring calls it. */
  public IdemWebhooksAutoConfiguration() {}

  /**
   * The inbox.
   *
   * @param properties the settings
   * @param dataSource the app's DataSource, for {@code store=datasource} (PostgreSQL)
   * @param clock a {@link Clock} bean of the app, if any: the clock the inbox stamps re-driven,
   *     purged and waiting events by, as the sources and the processor have it; else the system's
   * @return the open inbox; closed at shutdown
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public WebhookInbox idemWebhookInbox(IdemProperties properties, ObjectProvider<DataSource> dataSource,
      ObjectProvider<Clock> clock) {
    WebhookInbox.Builder b;
    if (properties.webhooks().store() == IdemProperties.Store.DATASOURCE) {
      b = WebhookInbox.postgres(Stores.required(dataSource, "idem.webhooks.store"));
    } else {
      b = WebhookInbox.sqlite(Path.of(properties.directory()).resolve("webhooks"));
    }
    // The sources stamp received times, and the processor due times, by the app's clock: redrive
    // on another one (the system's) made a dead letter due only in the processor's future under a
    // Clock bean behind it, and it never ran again.
    Clock appClock = clock.getIfAvailable();
    if (appClock != null) {
      b.clock(appClock);
    }
    return b.open();
  }

  /**
   * The processor, running the subscription beans; the lifecycle starts and stops it.
   *
   * @param inbox the inbox
   * @param subscriptions the subscription beans
   * @param listener the webhook listener beans (Idem's metrics, the app's own), every one told
   * @param properties the settings
   * @param environment the environment, for the owner name
   * @param clock a {@link Clock} bean of the app, if any: the clock of leases and due times, the
   *     one the sources stamp accepted events with ({@link #idemWebhookReceivers}); else the inbox's
   * @return the processor, not started
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public WebhookProcessor idemWebhookProcessor(WebhookInbox inbox, ObjectProvider<WebhookSubscription> subscriptions,
      ObjectProvider<WebhookListener> listener, IdemProperties properties, Environment environment,
      ObjectProvider<Clock> clock) {
    WebhookProcessor.Builder b = WebhookProcessor.builder(inbox).workers(properties.webhooks().workers())
        .maxRunTime(properties.webhooks().maxRunTime());
    // The sources stamp each event received, and due, by this clock: a processor on another one
    // (the inbox's system clock) found events accepted under a Clock bean ahead of it due only in
    // its future, and left them PENDING until then.
    Clock appClock = clock.getIfAvailable();
    if (appClock != null) {
      b.clock(appClock);
    }
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
      try {
        b.owner(owner);
      } catch (IllegalArgumentException e) {
        throw IdemAutoConfiguration.badOwner(e, "in the webhook inbox");
      }
    }
    return b.build();
  }

  /**
   * The endpoint of each source, on its path (default {@code /webhooks/NAME}). Two sources on one
   * path fail the startup: one of them would get no endpoint, and its sender's every delivery would
   * be checked against the other's secrets and refused, with nothing said.
   *
   * @param inbox the inbox
   * @param properties the settings
   * @param listener the webhook listener beans (Idem's metrics, the app's own), every one told
   * @param clock a {@link Clock} bean of the app, if any: the sources check signed timestamps
   *     against it (tests pin time with one); else the system clock
   * @return the endpoints, served by {@link #idemWebhookFilter} and {@link #idemWebhookEndpoints}
   */
  @Bean
  public WebhookEndpoints idemWebhookReceivers(WebhookInbox inbox, IdemProperties properties,
      ObjectProvider<WebhookListener> listener, ObjectProvider<Clock> clock) {
    WebhookListener all = every(listener);
    Map<String, WebhookReceiver> byPath = new LinkedHashMap<>();
    properties.webhooks().sources().forEach((name, source) -> {
      String path = path(name, source);
      WebhookReceiver other = byPath.putIfAbsent(path, receiver(name, source, inbox, all, clock.getIfAvailable()));
      if (other != null) {
        throw new IllegalStateException("idem.webhooks.sources." + other.source().name() + " and idem.webhooks.sources."
            + name + " are both on path " + path + "; give each source a path of its own");
      }
    });
    return new WebhookEndpoints(byPath);
  }

  /**
   * Serves the webhook paths ahead of the app's filters, at {@link #FILTER_ORDER}: it reads each
   * delivery's raw body itself (up to the source's cap, 1 MiB by default; a larger one is answered
   * 413), verifies and stores it, answers, and passes the request no further. A form-encoded
   * delivery (GitHub's {@code application/x-www-form-urlencoded}) therefore reaches the signature
   * check whole even when the app has a filter that reads a POST's parameters
   * ({@code spring.mvc.hiddenmethod.filter.enabled=true}).
   *
   * <p>It is ahead of Spring Security's filter chain too, on purpose: a delivery proves who sent
   * it by its signature, a sender can hold neither a session, a CSRF token nor the app's
   * credentials, and the CSRF check would itself consume a form-encoded body. So the app's security
   * rules do not apply to these paths (no {@code permitAll} or CSRF exclusion is needed for them);
   * restrict senders' addresses at the ingress, or in a filter of the app's that runs before this
   * one. Only the exact paths are filtered, for REQUEST dispatches; every other request passes
   * untouched.
   *
   * @param endpoints the endpoints
   * @return the filter's registration
   */
  @Bean
  public FilterRegistrationBean<Filter> idemWebhookFilter(WebhookEndpoints endpoints) {
    FilterRegistrationBean<Filter> r = new FilterRegistrationBean<>(endpoints.filter());
    r.setName("idemWebhookFilter");
    r.setOrder(FILTER_ORDER);
    r.setUrlPatterns(endpoints.paths());
    r.setDispatcherTypes(DispatcherType.REQUEST);
    return r;
  }

  /**
   * Maps each endpoint's servlet on its path, beside the DispatcherServlet. The filter answers
   * requests first; the mapping makes the container route the path to a chain that holds the
   * filter in any servlet app, serves a forward to the path, and finds at startup a path another
   * servlet holds (which the filter would otherwise shadow without a word): that fails the startup.
   *
   * @param endpoints the endpoints
   * @return the initializer
   */
  @Bean
  public ServletContextInitializer idemWebhookEndpoints(WebhookEndpoints endpoints) {
    return servletContext -> {
      for (WebhookEndpoints.Endpoint e : endpoints.endpoints()) {
        ServletRegistration.Dynamic r = servletContext.addServlet("idemWebhook-" + e.source(), e.servlet());
        Set<String> taken = r.addMapping(e.path());
        if (!taken.isEmpty()) {
          throw new IllegalStateException("idem.webhooks.sources." + e.source() + ".path " + e.path()
              + " is already mapped to another servlet; give the source a path of its own");
        }
      }
    };
  }

  private static String path(String name, IdemProperties.Source s) {
    if (s.path() == null || s.path().isBlank()) {
      return "/webhooks/" + name;
    }
    String path = s.path();
    // The filter that serves the endpoints matches exact paths only: a pattern ("/hooks/*") or a
    // relative path would reach the servlet behind the app's filters, which may have read a
    // form-encoded body already, and every such delivery would be refused as badly signed.
    if (!path.startsWith("/") || path.indexOf('*') >= 0 || path.indexOf('?') >= 0 || path.indexOf('#') >= 0) {
      throw new IllegalStateException("idem.webhooks.sources." + name + ".path " + path + " is not an exact path;"
          + " give one path starting with '/', such as /webhooks/" + name + ", without '*', '?' or '#'");
    }
    return path;
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
    if (s.maxBodyBytes() < 1) {
      throw new IllegalStateException("idem.webhooks.sources." + name + ".max-body-bytes is " + s.maxBodyBytes()
          + "; give the largest delivery body to take, in bytes, at least 1 (default 1048576, 1 MiB)");
    }
    WebhookSource.Builder b = WebhookSource.builder(name, scheme).tolerance(s.tolerance())
        .maxBodyBytes(s.maxBodyBytes());
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
