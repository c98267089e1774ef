package dev.idem.spring.internal;

import dev.idem.spring.client.IdempotencyInterceptor;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

/**
 * Puts Idem on the app's RestClient and RestTemplate builders and RestTemplate beans. WebFlux's side is
 * {@link WebClientWiring}, a class of its own: the verifier loads the types a class's methods
 * convert between, so one class holding both made an app without WebFlux fail to start
 * ({@code NoClassDefFoundError: ExchangeStrategies} while wrapping Boot's RestClient.Builder).
 */
public final class ClientWiring {
  private ClientWiring() {}

  /** The RestClient.Builder bean, wrapped so that {@code interceptor} is last at each build. */
  public static Object restClientBuilder(Object bean, DeferredInterceptor interceptor) {
    return LastInChain.wrap(RestClient.Builder.class, (RestClient.Builder) bean, b -> {
      ((RestClient.Builder) b).requestInterceptors(list -> last(list, interceptor));
      return b;
    });
  }

  /**
   * Boot's RestTemplateBuilder bean (immutable), with a customizer that puts {@code interceptor}
   * last in each template it builds: customizers run after the builder's interceptors, and a
   * template built in a service's constructor ({@code restTemplateBuilder.build()}, as Boot's
   * reference shows) is no bean for {@link #restTemplate} to see. Reached by reflection: Boot 4
   * moved the builder and its customizer interface to another package (each is in its builder's).
   *
   * @param bean a {@code RestTemplateBuilder}
   * @param interceptor the interceptor
   * @return a builder like {@code bean} with the customizer added
   */
  public static Object restTemplateBuilder(Object bean, DeferredInterceptor interceptor) {
    Method additional = null;
    for (Method m : bean.getClass().getMethods()) {
      if (m.getName().equals("additionalCustomizers") && m.getParameterCount() == 1
          && m.getParameterTypes()[0].isArray()) {
        additional = m;
      }
    }
    if (additional == null) {
      throw new IllegalStateException(bean.getClass() + " has no additionalCustomizers(RestTemplateCustomizer...)");
    }
    Class<?> customizerType = additional.getParameterTypes()[0].getComponentType();
    Object customizer = Proxy.newProxyInstance(customizerType.getClassLoader(), new Class<?>[] {customizerType},
        (proxy, method, args) -> switch (method.getName()) {
          case "customize" -> {
            addLast((RestTemplate) args[0], interceptor);
            yield null;
          }
          case "equals" -> proxy == args[0];
          case "hashCode" -> System.identityHashCode(proxy);
          case "toString" -> "Idem's RestTemplate customizer";
          default -> throw new UnsupportedOperationException(method.toString());
        });
    Object customizers = Array.newInstance(customizerType, 1);
    Array.set(customizers, 0, customizer);
    try {
      return additional.invoke(bean, customizers);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    } catch (InvocationTargetException e) {
      throw new IllegalStateException("adding Idem's customizer to " + bean.getClass() + " failed", e.getCause());
    }
  }

  /**
   * A RestTemplate bean, with {@code interceptor} added last, and its request factory's keyed
   * requests bounded by the attempt timeout if the factory does not stop on an interrupt
   * ({@link KeyedAttemptTimeouts}).
   *
   * @param beanName the bean's name, for a WARN
   * @param keyHeader the key header
   * @param attemptTimeoutSet whether idem.client.attempt-timeout is set (for a WARN only)
   */
  public static void restTemplate(Object bean, String beanName, DeferredInterceptor interceptor, String keyHeader,
      boolean attemptTimeoutSet) {
    RestTemplate template = (RestTemplate) bean;
    List<ClientHttpRequestInterceptor> list = new java.util.ArrayList<>(template.getInterceptors());
    last(list, interceptor);
    // Without interceptors, getRequestFactory() is the template's own factory, not the chain over it.
    template.setInterceptors(List.of());
    ClientHttpRequestFactory factory = template.getRequestFactory();
    ClientHttpRequestFactory bounded = KeyedAttemptTimeouts.bound(factory, attemptTimeout(interceptor), keyHeader,
        "RestTemplate bean '" + beanName + "'", attemptTimeoutSet);
    if (bounded != factory) {
      template.setRequestFactory(bounded);
    }
    template.setInterceptors(list);
  }

  /**
   * The attempt timeout of the executor behind {@code interceptor}, read at a keyed request (the
   * interceptor exists by then: it set the key header); null for none.
   */
  static Supplier<Duration> attemptTimeout(DeferredInterceptor interceptor) {
    return () -> {
      try {
        return interceptor.get().executor().retryPolicy().attemptTimeout().orElse(null);
      } catch (IllegalStateException e) {
        return null; // the context is gone: the interceptor refuses the call anyway
      }
    };
  }

  /** {@code interceptor} added last to a template Boot's RestTemplateBuilder built. */
  private static void addLast(RestTemplate template, DeferredInterceptor interceptor) {
    List<ClientHttpRequestInterceptor> list = new java.util.ArrayList<>(template.getInterceptors());
    last(list, interceptor);
    template.setInterceptors(list);
  }

  private static void last(List<ClientHttpRequestInterceptor> list, DeferredInterceptor idem) {
    if (list.stream().anyMatch(i -> i instanceof IdempotencyInterceptor) && idem.canGet()) {
      // The app put one there itself: if it is the bean, it is Idem's, to be moved last. It exists
      // then, so looking it up makes nothing early.
      idem.get();
    }
    boolean appHasItsOwn = list.stream().anyMatch(i -> i instanceof IdempotencyInterceptor && !idem.isIdems(i));
    list.removeIf(idem::isIdems);
    if (!appHasItsOwn) {
      list.add(idem.forChain());
    }
  }
}
