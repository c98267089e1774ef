package dev.idem.spring.autoconfigure;

import dev.idem.server.GuardListener;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.metrics.MicrometerGuardMetrics;
import dev.idem.spring.internal.CallerHeader;
import dev.idem.spring.internal.GuardFactory;
import dev.idem.spring.internal.GuardFilter;
import dev.idem.spring.internal.HandlerFailures;
import dev.idem.spring.internal.Stores;
import dev.idem.spring.internal.TomcatForwards;
import dev.idem.spring.server.IdempotencyCaller;
import dev.idem.storage.JdbcUrls;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.function.Function;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * The server half in a Spring MVC app: the guard's store (embedded SQLite in
 * {@code idem.directory}/guard.db, or the app's DataSource), the guard, and one filter that guards
 * the routes named in {@code idem.server.routes} and the handlers marked
 * {@link dev.idem.spring.server.Idempotent}. Off with {@code idem.server.enabled=false}. Not made
 * in a servlet app without Spring MVC (a Jersey app), where {@link IdemAutoConfiguration} fails the
 * startup on any {@code idem.server.*} setting instead of letting the app start unguarded. (The
 * handler parameter of type {@link dev.idem.core.IdempotencyKey}, the key the guard admitted the
 * request under, is IdemAutoConfiguration's: it must be null, not bound from the request, with the
 * guard off too.)
 */
@AutoConfiguration(after = IdemAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = {"jakarta.servlet.Filter", IdemAutoConfiguration.SPRING_MVC})
@ConditionalOnProperty(prefix = "idem.server", name = "enabled", matchIfMissing = true)
public class IdemServerAutoConfiguration {
  /**
   * The filter's order: after Spring Security's chain (-100), so that the caller's principal is
   * known. Boot's {@code FormContentFilter} (-9900) and Security's CSRF check run before it and
   * consume a form-encoded body by reading its parameters; the guard then fingerprints those
   * parameters, canonically ordered, rather than move ahead of Security and lose the principal.
   */
  public static final int FILTER_ORDER = 0;

  /** Makes the auto-configuration; Spring calls it. */
  public IdemServerAutoConfiguration() {}

  /**
   * The guard's records: {@code idem.directory}/guard.db, or the app's database
   * ({@code idem.server.store=datasource}: PostgreSQL, or the file of a {@code jdbc:sqlite:} URL).
   *
   * @param properties the settings
   * @param dataSource the app's DataSource
   * @return the store; closed at shutdown (an app's DataSource is left open)
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public IdempotencyStore idemGuardStore(IdemProperties properties, ObjectProvider<DataSource> dataSource) {
    if (properties.server().store() == IdemProperties.Store.DATASOURCE) {
      DataSource ds = Stores.required(dataSource, "idem.server.store");
      String url = Stores.url(ds);
      if (Stores.isPostgres(url)) {
        return JdbcIdempotencyStore.postgres(ds);
      }
      Path file = Stores.sqliteFile(url);
      if (file == null) {
        throw new IllegalStateException("idem.server.store=datasource works on PostgreSQL and on a SQLite file; the"
            + " app's DataSource is " + JdbcUrls.shown(url));
      }
      return JdbcIdempotencyStore.sqlite(file);
    }
    Path dir = Path.of(properties.directory());
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("Idem could not create " + dir.toAbsolutePath(), e);
    }
    return JdbcIdempotencyStore.sqlite(dir.resolve("guard.db"));
  }

  /**
   * Makes the guards of {@code @Idempotent} handlers with settings of their own.
   *
   * @param store the store
   * @param properties the settings
   * @param environment the environment, for the instance name
   * @param listeners the guard listener beans (metrics)
   * @return the factory
   */
  @Bean
  public GuardFactory idemGuardFactory(IdempotencyStore store, IdemProperties properties, Environment environment,
      ObjectProvider<GuardListener> listeners) {
    IdemProperties.Server s = properties.server();
    // Only a shared store needs a stable instance name; an embedded one ends dead claims at open.
    String instance = s.store() == IdemProperties.Store.DATASOURCE
        ? IdemAutoConfiguration.owner(properties, environment) : null;
    if (instance != null) {
      // The guard's rule for the name is narrower than the journal's (1 to 100 of letters, digits,
      // . _ : -); checked here, where the failure can say which setting to change, rather than when
      // the first guard is built.
      try {
        IdempotencyGuard.builder(store).instanceId(instance);
      } catch (IllegalArgumentException e) {
        throw IdemAutoConfiguration.badOwner(e, "to the idempotency guard's shared store");
      }
    }
    return new GuardFactory(store, s.keyHeader(), s.inFlightWait(), instance,
        listeners.orderedStream().toList());
  }

  /**
   * The guard with the {@code idem.server.*} settings: the routes' and the annotated handlers'
   * without settings of their own. Apps may use it directly (its records and stats).
   *
   * @param factory the factory
   * @param properties the settings
   * @return the guard; closed at shutdown
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public IdempotencyGuard idemGuard(GuardFactory factory, IdemProperties properties) {
    return factory.defaultGuard(defaults(properties));
  }

  /**
   * The filter.
   *
   * @param factory the factory
   * @param guard the default guard
   * @param properties the settings
   * @param mappings the app's handler mappings
   * @param dataSource the app's DataSource
   * @param beans the bean factory, for the transaction manager and the classes the handlers were made from
   * @param callers the app's {@link IdempotencyCaller} bean, if it has one
   * @return the filter
   * @throws IllegalStateException if both an {@link IdempotencyCaller} bean and
   *     {@code idem.server.caller-header} are set
   */
  @Bean
  public GuardFilter idemGuardFilter(GuardFactory factory, IdempotencyGuard guard, IdemProperties properties,
      ObjectProvider<RequestMappingHandlerMapping> mappings, ObjectProvider<DataSource> dataSource, BeanFactory beans,
      ObjectProvider<IdempotencyCaller> callers) {
    IdemProperties.Server s = properties.server();
    IdempotencyCaller bean = callers.getIfAvailable();
    Function<HttpServletRequest, String> caller;
    String callerName;
    if (s.callerHeader() != null) {
      if (bean != null) {
        // Two answers to one question: whichever won, the other would be silently ignored.
        throw new IllegalStateException("idem.server.caller-header is set and there is an IdempotencyCaller bean:"
            + " give the guard's caller one way, not both");
      }
      CallerHeader header = new CallerHeader(s.callerHeader());
      caller = header;
      callerName = header.description();
    } else {
      caller = bean;
      callerName = "the app's IdempotencyCaller";
    }
    return new GuardFilter(factory, guard, defaults(properties), s.routes(), s.transactional(),
        s.store() == IdemProperties.Store.DATASOURCE, () -> mappings.orderedStream().toList(),
        dataSource::getIfAvailable, () -> transactionManager(beans), s.maxBufferedBodyBytes(), caller, callerName,
        beans instanceof ConfigurableListableBeanFactory c ? c : null);
  }

  private static Object transactionManager(BeanFactory beans) {
    try {
      return dev.idem.spring.internal.Transactions.manager(beans);
    } catch (NoClassDefFoundError noSpringTx) {
      return null;
    }
  }

  /**
   * Notes, for transactional mode, that a handler threw although Spring MVC answered the exception,
   * so that its write rolls back and the answer is not stored. Resolves nothing itself.
   *
   * @return the resolver, first of the dispatcher's
   */
  @Bean
  public HandlerFailures idemHandlerFailures() {
    return new HandlerFailures();
  }

  /**
   * Registers the filter for every path; it passes unguarded requests on untouched.
   *
   * @param filter the filter
   * @return the registration
   */
  @Bean
  public FilterRegistrationBean<GuardFilter> idemGuardFilterRegistration(GuardFilter filter) {
    FilterRegistrationBean<GuardFilter> r = new FilterRegistrationBean<>(filter);
    r.setOrder(FILTER_ORDER);
    r.setName("idemGuardFilter");
    return r;
  }

  /**
   * Keeps an embedded Tomcat 11's response open at the end of a forward, as Tomcat 10.1 does
   * ({@link TomcatForwards}): the guard sends a handler's answer after the forward has returned.
   *
   * @return the post-processor of the embedded Tomcat's factory
   */
  @Bean
  public static TomcatForwards idemTomcatForwards() {
    return new TomcatForwards();
  }

  private static GuardFactory.Settings defaults(IdemProperties properties) {
    IdemProperties.Server s = properties.server();
    return new GuardFactory.Settings(s.retention(), s.mismatchStatus(), true, false);
  }

  /** The guard's meters, when Micrometer is there. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static class Metrics {
    @Bean
    GuardListener idemGuardMetrics(ObjectProvider<MeterRegistry> registry, IdempotencyStore store) {
      MeterRegistry r = registry.getIfAvailable();
      return r == null ? GuardListener.none() : MicrometerGuardMetrics.bind(r, store, Clock.systemUTC());
    }
  }
}
