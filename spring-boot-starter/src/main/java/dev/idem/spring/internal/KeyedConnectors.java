package dev.idem.spring.internal;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.util.Objects;
import java.util.function.Function;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.client.reactive.ClientHttpResponse;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * A keyed WebClient exchange's redirect is never followed below Idem's filter: the reactive twin
 * of {@link KeyedRedirects}. Boot builds the WebClient's connector with
 * {@code spring.http.reactiveclient.redirects} (Boot 3.5) or {@code spring.http.clients.redirects}
 * (Boot 4.0), whose default follows them: Reactor Netty would re-send a keyed POST answered 307 to
 * the new location, where the journal counts no attempt. A connector picks its HTTP client before
 * the request's headers are written, so the headers cannot choose it; Idem's filter instead marks
 * the keyed exchange in the Reactor context ({@link #markKeyed}), and the connector Boot's builder
 * builds is wrapped to connect a marked exchange through a twin built with {@code DONT_FOLLOW}
 * (same timeouts, SSL and customizers). Others keep Boot's redirects. Boot 3.5 and 4.0 name the
 * settings type differently ({@code ClientHttpConnectorSettings}, {@code HttpClientSettings});
 * both are reached by reflection so that one jar serves both.
 */
public final class KeyedConnectors {
  private static final String BUILDER = "org.springframework.boot.http.client.reactive.ClientHttpConnectorBuilder";

  /** The context key Idem's filter sets on a keyed exchange; private to Idem by its class name. */
  private static final String KEYED = KeyedConnectors.class.getName() + ".keyed";

  private KeyedConnectors() {}

  /**
   * The context of an exchange Idem sends with a key.
   *
   * @return a function for {@code Mono.contextWrite}
   */
  public static Function<Context, Context> markKeyed() {
    return ctx -> ctx.put(KEYED, Boolean.TRUE);
  }

  /** Whether {@code bean} is Boot's reactive connector builder (Boot 3.5 and later). */
  public static boolean isConnectorBuilder(Object bean) {
    return builderInterface(bean.getClass()) != null;
  }

  private static Class<?> builderInterface(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      for (Class<?> i : c.getInterfaces()) {
        if (i.getName().equals(BUILDER)) {
          return i;
        }
      }
    }
    return null;
  }

  /**
   * Boot's connector builder, wrapped: each connector it builds connects keyed exchanges through a
   * twin that follows no redirect.
   *
   * @param builder a {@code ClientHttpConnectorBuilder}
   * @return a proxy of the builder's interface
   * @throws IllegalArgumentException if {@code builder} is not one
   */
  public static Object wrapBuilder(Object builder) {
    if (Proxy.isProxyClass(builder.getClass()) && Proxy.getInvocationHandler(builder) instanceof BuilderHandler) {
      return builder;
    }
    Class<?> type = builderInterface(builder.getClass());
    if (type == null) {
      throw new IllegalArgumentException(builder.getClass() + " is not a " + BUILDER);
    }
    return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, new BuilderHandler(builder, type));
  }

  /**
   * A connector that connects exchanges marked by {@link #markKeyed} through {@code keyed} and
   * the rest through {@code others}.
   *
   * @param others the connector as the app configured it
   * @param keyed its twin that follows no redirect
   * @return the connector
   */
  public static ClientHttpConnector routing(ClientHttpConnector others, ClientHttpConnector keyed) {
    return new Routing(Objects.requireNonNull(others, "others"), Objects.requireNonNull(keyed, "keyed"));
  }

  private record Routing(ClientHttpConnector others, ClientHttpConnector keyed) implements ClientHttpConnector {
    @Override
    public Mono<ClientHttpResponse> connect(HttpMethod method, URI uri,
        Function<? super ClientHttpRequest, Mono<Void>> requestCallback) {
      return Mono.deferContextual(ctx -> (ctx.getOrDefault(KEYED, Boolean.FALSE) ? keyed : others)
          .connect(method, uri, requestCallback));
    }
  }

  private static final class BuilderHandler implements InvocationHandler {
    private final Object target;
    private final Class<?> type;

    BuilderHandler(Object target, Class<?> type) {
      this.target = target;
      this.type = type;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      if (method.getName().equals("build") && method.getParameterCount() == 0) {
        return InvocationHandler.invokeDefault(proxy, method); // build(null), through the method below
      }
      if (method.getName().equals("build") && method.getParameterCount() == 1) {
        Object settings = args[0] != null ? args[0] : method.getParameterTypes()[0].getMethod("defaults").invoke(null);
        ClientHttpConnector others = (ClientHttpConnector) call(method, args);
        ClientHttpConnector keyed = (ClientHttpConnector) call(method, new Object[] {dontFollow(settings)});
        return routing(others, keyed);
      }
      if (method.getDeclaringClass() == Object.class) {
        return switch (method.getName()) {
          case "equals" -> proxy == args[0];
          case "hashCode" -> System.identityHashCode(proxy);
          default -> "KeyedConnectors(" + target + ")";
        };
      }
      Object result = call(method, args);
      // withCustomizer(...) and the like return a new builder: it keeps the rule.
      return type.isInstance(result) ? wrapBuilder(result) : result;
    }

    private Object call(Method method, Object[] args) throws Throwable {
      try {
        return method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object dontFollow(Object settings) throws ReflectiveOperationException {
      for (Method m : settings.getClass().getMethods()) {
        if (m.getName().equals("withRedirects") && m.getParameterCount() == 1 && m.getParameterTypes()[0].isEnum()) {
          return m.invoke(settings, Enum.valueOf((Class<? extends Enum>) m.getParameterTypes()[0], "DONT_FOLLOW"));
        }
      }
      throw new NoSuchMethodException(settings.getClass().getName() + ".withRedirects(DONT_FOLLOW)");
    }
  }
}
