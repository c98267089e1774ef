package dev.idem.spring.autoconfigure;

import dev.idem.core.event.IdemListener;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.JournalException;
import dev.idem.core.RetryPolicy;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.spi.Journal;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.spring.internal.BreakerStates;
import dev.idem.spring.internal.DispatcherNames;
import dev.idem.spring.internal.ExecutorMetrics;
import dev.idem.spring.internal.GuardedKeyArgument;
import dev.idem.spring.internal.IdemLifecycle;
import dev.idem.spring.internal.IdempotentPlacement;
import dev.idem.spring.internal.ReactiveIdempotentHandlers;
import dev.idem.spring.internal.SetProperties;
import dev.idem.spring.internal.Stores;
import dev.idem.webhooks.WebhookProcessor;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Idem's core for a Spring Boot app: the journal (embedded SQLite in {@code idem.directory}, or the
 * app's DataSource), the executor, the pool for their asynchronous journal work, and the
 * lifecycle that drains the outbox and flushes the journal at a graceful shutdown. Every bean
 * backs off if the app defines its own of the same type. In a Spring MVC app, also the handler
 * parameter of type {@link dev.idem.core.IdempotencyKey} (whether or not the guard is on). In a
 * reactive app, what only a Spring MVC app serves ({@code idem.webhooks.sources}, and, unless
 * {@code idem.server.enabled=false}, any {@code idem.server.*} setting and a handler marked
 * {@code @Idempotent}) fails the startup with an {@link IllegalStateException} naming it; so does,
 * unless {@code idem.server.enabled=false}, any {@code idem.server.*} setting in a servlet app
 * without Spring MVC (a Jersey app: the guard needs Spring MVC, the webhook endpoints do not). An app
 * that serves no web requests is not refused: a {@code @SpringBootTest(webEnvironment = NONE)} of a
 * Spring MVC app, and the parent of a context hierarchy whose web child runs the guard, are such
 * apps, and the application type cannot tell them from a batch job. In every app, unless
 * {@code idem.server.enabled=false}, a bean carrying {@code @Idempotent} where the guard never reads
 * it (a {@code @Service} method, a JAX-RS resource, a class without a handler method; in a servlet
 * app without Spring MVC's mapping, every one) fails the startup, naming it.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",   // Boot 3
    "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration"})  // Boot 4
@EnableConfigurationProperties(IdemProperties.class)
public class IdemAutoConfiguration {
  /** The name of the pool that does Idem's asynchronous journal work (WebClient calls, backoff timers). */
  public static final String JOURNAL_POOL = "idemJournalPool";

  /**
   * The class whose presence makes a servlet app a Spring MVC app, for the guard's auto-configuration
   * and for {@link ServletAppWithoutMvc}: one name, so that the refusal is the guard's absence exactly.
   */
  static final String SPRING_MVC = "org.springframework.web.servlet.DispatcherServlet";

  /** Makes the auto-configuration; Spring calls it. */
  public IdemAutoConfiguration() {}

  /**
   * The journal: {@code JdbcJournal.embedded(directory/journal)}, or {@code JdbcJournal.dataSource}
   * over the app's DataSource when {@code idem.journal.store=datasource}, taking request bodies up
   * to {@code idem.journal.max-request-body-bytes}. Spring closes it after
   * everything that writes to it, so its own JVM hook is off. An open that fails (another process
   * has the journal, a damaged file) fails the startup with the journal's message. Not made when
   * the app declares a {@link Journal} or an {@link IdempotentExecutor} bean of its own: such an
   * executor brings its journal, and one of the starter's would be a second store (and file) that
   * nothing writes to; the health indicator, the gauges and the shutdown's flush read
   * {@link IdempotentExecutor#journal()}.
   *
   * @param properties the settings
   * @param dataSource the app's DataSource, used only for {@code store=datasource}
   * @return the open journal
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean({Journal.class, IdempotentExecutor.class})
  public JdbcJournal idemJournal(IdemProperties properties, ObjectProvider<DataSource> dataSource) {
    JdbcJournal.Builder b;
    String where;
    if (properties.journal().store() == IdemProperties.Store.DATASOURCE) {
      DataSource ds = Stores.required(dataSource, "idem.journal.store");
      b = JdbcJournal.dataSource(ds);
      where = "the app's DataSource";
    } else {
      Path dir = Path.of(properties.directory()).resolve("journal");
      b = JdbcJournal.embedded(dir);
      where = dir.toAbsolutePath().toString();
    }
    try {
      return b.excludeHeaders(properties.client().secretHeaders())
          .maxRequestBodyBytes(properties.journal().maxRequestBodyBytes()).closeOnShutdown(false).open();
    } catch (JournalException e) {
      throw new IllegalStateException("Idem could not open its journal (" + where + "): " + e.getMessage(), e);
    }
  }

  /**
   * The pool for the executor's asynchronous journal work and the WebClient filter's journaling
   * before a first attempt: daemon threads {@code idem-journal-N}, as many as processors (at least
   * 2), a queue of 1024 tasks, refusing beyond (the executor then waits where the work came from).
   *
   * @return the pool; shut down after the executor closes
   */
  @Bean(name = JOURNAL_POOL, destroyMethod = "shutdown")
  public ThreadPoolExecutor idemJournalPool() {
    int n = Math.max(2, Runtime.getRuntime().availableProcessors());
    AtomicInteger count = new AtomicInteger();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(n, n, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1024), r -> {
      Thread t = new Thread(r, "idem-journal-" + count.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /**
   * Tracks circuit breaker states for the health indicator.
   *
   * @return the listener
   */
  @Bean
  public BreakerStates idemBreakerStates() {
    return new BreakerStates();
  }

  /**
   * The executor: retry policy, key retention and secret headers from {@code idem.client.*}, owner
   * from {@code idem.owner} (default: the HOSTNAME environment variable, a pod's name), every
   * {@link IdemListener} bean as listener (Micrometer's included), asynchronous journal work on
   * {@link #JOURNAL_POOL}.
   *
   * @param journal the journal
   * @param properties the settings
   * @param environment the environment, for HOSTNAME
   * @param pool the journal pool
   * @param listeners the listener beans
   * @return the executor; Spring closes it before the journal
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public IdempotentExecutor idemExecutor(Journal journal, IdemProperties properties, Environment environment,
      @Qualifier(JOURNAL_POOL) ThreadPoolExecutor pool, ObjectProvider<IdemListener> listeners) {
    IdemProperties.Client c = properties.client();
    RetryPolicy.Builder policy = RetryPolicy.builder().maxAttempts(c.maxAttempts());
    if (c.attemptTimeout() != null) {
      policy.attemptTimeout(c.attemptTimeout());
    }
    if (c.deadline() != null) {
      policy.deadline(c.deadline());
    }
    IdempotentExecutor.Builder b = IdempotentExecutor.builder().journal(journal).retryPolicy(policy.build())
        .serverKeyRetention(c.serverKeyRetention()).secretHeaders(c.secretHeaders())
        .allowHeaders(c.allowHeaders()).allowQueryParameters(c.allowQueryParameters()).asyncExecutor(pool)
        .listener(IdemListener.all(listeners.orderedStream().toList()));
    String owner = owner(properties, environment);
    if (owner != null) {
      try {
        b.owner(owner);
      } catch (IllegalArgumentException e) {
        throw badOwner(e);
      }
    }
    return b.build();
  }

  /**
   * Starts and stops every outbox and the webhook processor; at shutdown also closes the executor
   * (after every outbox drained) and flushes its journal. Only this context's own beans: in a
   * context hierarchy, a child whose executor, outbox or processor backed off for its parent's
   * (they are found there) uses them but neither starts nor stops them; the parent's lifecycle
   * does, and the child's close leaves them running. What the child defines itself (an executor
   * of its own beside the parent's) its own lifecycle starts and stops. Two OutboxDispatcher beans
   * of this context that register the same operation name fail the startup, before either starts,
   * naming the name and both beans: each would deliver that name's operations, through whichever
   * transport claimed one first.
   *
   * @param outbox the outboxes (every OutboxDispatcher bean), if any
   * @param processor the webhook processor, if any
   * @param executor the executor
   * @param properties the settings
   * @param beans this context's bean factory, for its own beans and the dispatchers' bean names
   * @return the lifecycle
   * @throws IllegalStateException if an operation name is registered on more than one dispatcher
   */
  @Bean
  public IdemLifecycle idemLifecycle(ObjectProvider<OutboxDispatcher> outbox, ObjectProvider<WebhookProcessor> processor,
      ObjectProvider<IdempotentExecutor> executor, IdemProperties properties, ListableBeanFactory beans) {
    // The providers also resolve from the ancestors: a child's lifecycle holding its parent's beans
    // started the parent's outbox a second time (the child failed to start) and, when the child
    // closed, closed the parent's executor (the still running parent then refused every keyed call).
    // getBeansOfType and getBeanNamesForType look at this context's own beans only.
    Map<String, OutboxDispatcher> own = beans.getBeansOfType(OutboxDispatcher.class);
    DispatcherNames.requireOneDispatcherPerName(own);
    Set<OutboxDispatcher> local = Collections.newSetFromMap(new IdentityHashMap<>());
    local.addAll(own.values());
    // Every dispatcher bean, not getIfAvailable's one: an app may give a partner a dispatcher of its
    // own, and two beans without a @Primary must neither fail the startup nor go undrained. The
    // provider's stream for their order (@Order on a @Bean method is known to the factory only).
    List<OutboxDispatcher> outboxes = outbox.orderedStream().filter(local::contains).toList();
    // getIfAvailable looks at this context first, so where it has one of its own it is that one.
    return new IdemLifecycle(outboxes, local(beans, WebhookProcessor.class) ? processor.getIfAvailable() : null,
        local(beans, IdempotentExecutor.class) ? executor.getIfAvailable() : null, properties.shutdownTimeout());
  }

  private static boolean local(ListableBeanFactory beans, Class<?> type) {
    return beans.getBeanNamesForType(type).length > 0;
  }

  /**
   * The builder's refusal of the owner name, saying where the name came from: the message alone
   * does not tell an operator that {@code HOSTNAME} (a long pod name) was read.
   */
  static IllegalArgumentException badOwner(IllegalArgumentException e) {
    return badOwner(e, "in the journal");
  }

  /**
   * {@link #badOwner(IllegalArgumentException)}, saying where the name is used.
   *
   * @param where where the name identifies this instance, e.g. "in the journal"
   */
  static IllegalArgumentException badOwner(IllegalArgumentException e, String where) {
    return new IllegalArgumentException("idem.owner (or the HOSTNAME environment variable, read when idem.owner is"
        + " unset) names this instance " + where + ": " + e.getMessage(), e);
  }

  static String owner(IdemProperties properties, Environment environment) {
    String owner = properties.owner();
    if (owner == null || owner.isBlank()) {
      owner = environment.getProperty("HOSTNAME");
    }
    return owner == null || owner.isBlank() ? null : owner;
  }

  /**
   * Refuses, in a reactive app, the settings that only the servlet auto-configurations serve: the
   * guard and the webhook endpoints are servlet filters, so there such settings bound and nothing
   * served them (deliveries got 404, guarded routes ran once per retry) without a word, which is
   * what ignoreUnknownFields = false refuses for a misspelt key. The same goes for a handler marked
   * {@code @Idempotent}, checked once every bean is defined and made (a controller's type is known
   * then): see {@link ReactiveIdempotentHandlers}. The condition names no WebFlux type, so an app
   * without WebFlux never loads one.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  static class ReactiveApp implements SmartInitializingSingleton {
    private final boolean serverEnabled;
    private final ListableBeanFactory beans;

    ReactiveApp(IdemProperties properties, Environment environment, ListableBeanFactory beans) {
      this.beans = beans;
      this.serverEnabled = properties.server().enabled();
      String app = "a reactive (WebFlux) app";
      refuseServerSettings(properties, environment, app,
          "the guard is a servlet filter that only a servlet (Spring MVC) app runs",
          "run the app on Spring MVC; or set idem.server.enabled=false");
      if (!properties.webhooks().sources().isEmpty()) {
        throw unserved("idem.webhooks.sources " + properties.webhooks().sources().keySet(), false, app,
            "the webhook endpoints are a servlet filter that only a servlet (Spring MVC) app runs",
            "run the app on Spring MVC");
      }
    }

    @Override
    public void afterSingletonsInstantiated() {
      // idem.server.enabled=false says the app knows nothing guards it here (as for the routes).
      if (serverEnabled) {
        ReactiveIdempotentHandlers.refuse(beans);
      }
    }
  }

  /**
   * Refuses a bean that carries {@code @Idempotent} where the guard never reads it (a method that is
   * not a Spring MVC handler method, a class without one: a {@code @Service} method, a JAX-RS
   * resource; a controller class whose handlers take GET, HEAD or OPTIONS only, which a class mark
   * leaves alone), naming it, once every bean is made: see {@link IdempotentPlacement}. Its authors
   * believe it guarded and would get a duplicate effect for every retry. Not with
   * {@code idem.server.enabled=false}: the app turned the guard off on purpose, so no annotation is
   * read anywhere and none is refused (as the reactive app's handlers and the routes are not).
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty(prefix = "idem.server", name = "enabled", matchIfMissing = true)
  static class IdempotentPlacementCheck implements SmartInitializingSingleton {
    private final ConfigurableListableBeanFactory beans;

    IdempotentPlacementCheck(ConfigurableListableBeanFactory beans) {
      this.beans = beans;
    }

    @Override
    public void afterSingletonsInstantiated() {
      // This context's own marker only: a non-web child of a servlet parent serves no requests.
      boolean servletApp = beans.getBeanNamesForType(ServletApp.class, false, false).length > 0;
      IdempotentPlacement.refuseMisplaced(beans, servletApp);
    }
  }

  /**
   * Made only in a servlet web app, by Boot's own test of the application type, so that
   * {@link IdempotentPlacementCheck} can tell a context that serves servlet requests (where a mark
   * no Spring MVC mapping reads guards nothing) from one that serves none.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  static class ServletApp {}

  /**
   * Refuses, in a servlet app without Spring MVC (a Jersey app, say), every {@code idem.server.*}
   * setting: the guard's auto-configuration needs Spring MVC (it finds the routes and the
   * {@code @Idempotent} handlers it guards through Spring MVC's handler mappings), so there such
   * settings bound and no guard ran, and the app's owners believed its endpoints guarded. The
   * webhook endpoints are a plain servlet filter and serve such an app, so its
   * {@code idem.webhooks.sources} are not refused. A non-web context (a
   * {@code @SpringBootTest(webEnvironment = NONE)}, a hierarchy's parent) is no servlet app and is
   * not refused either.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnMissingClass(SPRING_MVC)
  static class ServletAppWithoutMvc {
    ServletAppWithoutMvc(IdemProperties properties, Environment environment) {
      refuseServerSettings(properties, environment, "a servlet app without Spring MVC (no " + SPRING_MVC
          + " on the class path, as in a Jersey app)", "the guard runs only where Spring MVC serves the requests"
          + " (it finds the routes and handlers it guards through Spring MVC's handler mappings)",
          "serve the guarded routes with Spring MVC controllers; or set"
          + " idem.server.enabled=false");
    }
  }

  /**
   * Throws, unless {@code idem.server.enabled=false}, if the app sets any {@code idem.server.*} key (a
   * default's value given explicitly included): each says the app believes a guard runs, and where
   * the caller checks none does, so a retried keyed request would run its handler again.
   *
   * @param app what the app is, for the message, such as "a reactive (WebFlux) app"
   * @param why why no guard runs in such an app
   * @param fix what the user can do besides removing the settings
   */
  private static void refuseServerSettings(IdemProperties properties, Environment environment, String app,
      String why, String fix) {
    IdemProperties.Server server = properties.server();
    if (!server.enabled()) {
      return;
    }
    List<String> set = SetProperties.of(environment, "idem.server", IdemProperties.Server.class);
    if (!set.isEmpty()) {
      String named = set.stream().map(k -> k.equals("idem.server.routes") ? k + " " + server.routes() : k)
          .collect(Collectors.joining(", "));
      throw unserved(named, set.size() > 1, app, why, fix);
    }
  }

  private static IllegalStateException unserved(String setting, boolean several, String app, String why,
      String fix) {
    return new IllegalStateException(setting + (several ? " are" : " is") + " set, but this is " + app + " and "
        + why + ": nothing would serve " + (several ? "them" : "it") + ". Remove the setting"
        + (several ? "s" : "") + ", or " + fix);
  }

  /**
   * Lets a Spring MVC handler take the request's key as a parameter of type
   * {@link dev.idem.core.IdempotencyKey}: the key the guard admitted the request under (see
   * {@link GuardedKeyArgument}), null for a request that ran without a claim. Registered whenever
   * Spring MVC serves the app, {@code idem.server.enabled=false} included: without it Spring MVC's
   * catch-all {@code @ModelAttribute} handling would make the parameter through IdempotencyKey's
   * private constructor and bind its value from the query string or form fields, a key the client
   * wrote and {@code IdempotencyKey.of} never checked.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(name = "org.springframework.web.servlet.config.annotation.WebMvcConfigurer")
  static class MvcKeyArgument {
    @Bean
    WebMvcConfigurer idemKeyArgument() {
      return new WebMvcConfigurer() {
        @Override
        public void addArgumentResolvers(List<HandlerMethodArgumentResolver> resolvers) {
          resolvers.add(new GuardedKeyArgument());
        }
      };
    }
  }

  /**
   * Idem's meters on the app's registry, when Micrometer is there (Actuator brings it); their
   * gauges read the journal of the executor in use, the app's own executor's included.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static class Metrics {
    @Bean
    IdemListener idemMetrics(ObjectProvider<MeterRegistry> registry, ObjectProvider<IdempotentExecutor> executor) {
      MeterRegistry r = registry.getIfAvailable();
      if (r == null) {
        return IdemListener.none();
      }
      return new ExecutorMetrics(r, executor::getObject);
    }
  }
}
