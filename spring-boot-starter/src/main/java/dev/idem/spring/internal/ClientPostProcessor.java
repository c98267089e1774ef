package dev.idem.spring.internal;

import dev.idem.core.IdempotentExecutor;
import dev.idem.spring.client.IdempotencyExchangeFilter;
import dev.idem.spring.client.IdempotencyInterceptor;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.util.ClassUtils;

/**
 * Puts Idem on every {@code RestClient.Builder}, {@code RestTemplate}, {@code RestTemplateBuilder}
 * and {@code WebClient.Builder} bean, Boot's own builders included (prototype beans: each
 * injection point gets a wrapped one; the immutable RestTemplateBuilder: a copy with a customizer),
 * and makes the request factories and connectors Boot builds for them follow no keyed request's
 * redirect ({@link KeyedRedirects}, {@link KeyedConnectors}).
 * A post-processor rather than Boot's customizer interfaces, which Boot 4 moved to other packages:
 * this works the same on Boot 3.5 and 4.0. Its dependencies are looked up lazily, so that it does
 * not make the journal early, and Idem's interceptor and filter (and the executor they need) only
 * once the context's singletons are made, or at a client's first request if it is built before:
 * an {@code IdemListener} bean may take a client builder, and the executor is made to collect the
 * listeners ({@link DeferredInterceptor}). Once the context destroys its beans, such a first
 * request fails instead of making them again ({@link BeansGone}).
 */
public final class ClientPostProcessor implements BeanPostProcessor, SmartInitializingSingleton, DisposableBean {
  private static final ClassLoader LOADER = ClientPostProcessor.class.getClassLoader();
  private static final boolean REST_CLIENT = ClassUtils.isPresent("org.springframework.web.client.RestClient", LOADER);
  private static final boolean REST_TEMPLATE =
      ClassUtils.isPresent("org.springframework.web.client.RestTemplate", LOADER);
  private static final boolean WEB_CLIENT =
      ClassUtils.isPresent("org.springframework.web.reactive.function.client.WebClient", LOADER);

  /** Boot's RestTemplateBuilder: Boot 3.5's name, Boot 4.0's. */
  private static final Set<String> REST_TEMPLATE_BUILDERS = Set.of(
      "org.springframework.boot.web.client.RestTemplateBuilder", "org.springframework.boot.restclient.RestTemplateBuilder");

  private final ObjectProvider<IdempotentExecutor> executor;
  private final ObjectProvider<Executor> journalPool;
  private final Consumer<IdempotencyExchangeFilter.Builder> filterSettings;
  private final Supplier<String> keyHeader;
  private final ListableBeanFactory beans;
  private final DeferredInterceptor restInterceptor;
  private final BeansGone gone = new BeansGone();
  private volatile boolean contextReady;

  /**
   * @param interceptor the interceptor bean
   * @param executor the executor bean
   * @param journalPool the journal pool bean
   * @param filterSettings the key header, format, policy and cap of each WebClient filter
   * @param keyHeader the key header, read when Boot's request factory builder is wrapped
   * @param beans where the app's own WebClient filter bean is looked up: if it declared one, it
   *     is put on every WebClient.Builder instead of a filter made from the settings
   */
  public ClientPostProcessor(ObjectProvider<IdempotencyInterceptor> interceptor,
      ObjectProvider<IdempotentExecutor> executor, ObjectProvider<Executor> journalPool,
      Consumer<IdempotencyExchangeFilter.Builder> filterSettings, Supplier<String> keyHeader,
      ListableBeanFactory beans) {
    this.executor = executor;
    this.journalPool = journalPool;
    this.filterSettings = filterSettings;
    this.keyHeader = keyHeader;
    this.beans = beans;
    this.restInterceptor = new DeferredInterceptor(interceptor, () -> contextReady, gone);
  }

  /** From now on, a client built gets Idem's interceptor and filter themselves. */
  @Override
  public void afterSingletonsInstantiated() {
    contextReady = true;
  }

  /**
   * The context is destroying its beans (closed, or its refresh failed): a stand-in looking them
   * up from now on fails, since the factory would make them again once its destruction ends.
   */
  @Override
  public void destroy() {
    gone.set();
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    String type = bean.getClass().getName();
    if (REST_CLIENT && isA(bean, "org.springframework.web.client.RestClient$Builder")) {
      return ClientWiring.restClientBuilder(bean, restInterceptor);
    }
    if (REST_TEMPLATE && isNamed(bean.getClass(), REST_TEMPLATE_BUILDERS)) {
      return ClientWiring.restTemplateBuilder(bean, restInterceptor);
    }
    if (REST_TEMPLATE && isA(bean, "org.springframework.web.client.RestTemplate")) {
      ClientWiring.restTemplate(bean, beanName, restInterceptor, keyHeader.get(),
          attemptTimeoutSet(beans));
      return bean;
    }
    if (WEB_CLIENT && isA(bean, "org.springframework.web.reactive.function.client.WebClient$Builder")
        && !type.startsWith("jdk.proxy")) {
      return WebClientWiring.webClientBuilder(bean, executor::getObject, journalPool::getObject, filterSettings,
          beans, () -> contextReady, gone);
    }
    if (KeyedRedirects.isFactoryBuilder(bean)) {
      // Boot's clients' request factories: a keyed request's redirect is Idem's to see, not theirs to follow.
      // Its keyed twin also gets the attempt timeout where it does not stop on an interrupt.
      return KeyedRedirects.wrapBuilder(bean, keyHeader.get(), ClientWiring.attemptTimeout(restInterceptor));
    }
    if (WEB_CLIENT && KeyedConnectors.isConnectorBuilder(bean)) {
      // Boot's WebClient connector: the same rule, chosen by the filter's mark in the Reactor context.
      return KeyedConnectors.wrapBuilder(bean);
    }
    return bean;
  }

  /** Whether idem.client.attempt-timeout is set, read from the environment (making no Idem bean early). */
  private static boolean attemptTimeoutSet(ListableBeanFactory f) {
    try {
      return f.getBean(org.springframework.core.env.Environment.class).containsProperty("idem.client.attempt-timeout");
    } catch (org.springframework.beans.BeansException e) {
      return false;
    }
  }

  /** Whether {@code type} or a superclass has one of {@code names}: no class is loaded to tell. */
  static boolean isNamed(Class<?> type, Set<String> names) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      if (names.contains(c.getName())) {
        return true;
      }
    }
    return false;
  }

  private static boolean isA(Object bean, String className) {
    try {
      return ClassUtils.forName(className, LOADER).isInstance(bean);
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
