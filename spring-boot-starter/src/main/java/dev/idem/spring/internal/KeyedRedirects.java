package dev.idem.spring.internal;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Objects;
import org.springframework.http.client.ClientHttpRequestFactory;

/**
 * A keyed request's redirect is never followed below Idem's interceptor. Boot builds its clients'
 * request factories with {@code spring.http.client.redirects}, whose default follows them where
 * the client can: a JDK client then re-sends a keyed POST answered 307 or 308 to the new location,
 * and turns a 303 into a GET, where the journal counts no attempt. No client can switch redirects
 * per request, so Boot's factory builder is wrapped to build each factory twice, once as asked
 * and once with {@code DONT_FOLLOW} (same timeouts, SSL and customizers), and a request that
 * carries the key header goes through the second. Idem's interceptor then sees the 3xx, as with
 * the other adapters. The choice is made when the headers are complete, before the body starts
 * ({@link RoutedRequest}), so this wrapper never holds a body. Boot 3.5 and 4.0 name the
 * settings type differently ({@code ClientHttpRequestFactorySettings}, {@code HttpClientSettings}); both have
 * {@code withRedirects(DONT_FOLLOW)} and {@code defaults()}, reached by reflection so that one jar
 * serves both.
 */
public final class KeyedRedirects {
  private static final String BUILDER = "org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder";

  private KeyedRedirects() {}

  /** Whether {@code bean} is Boot's request factory builder (Boot 3.4 and later). */
  public static boolean isFactoryBuilder(Object bean) {
    return implementsBuilder(bean.getClass());
  }

  private static boolean implementsBuilder(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      for (Class<?> i : c.getInterfaces()) {
        if (i.getName().equals(BUILDER)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * Boot's request factory builder, wrapped: each factory it builds sends keyed requests (those
   * carrying {@code keyHeader}) through a twin that follows no redirect.
   *
   * @param builder a {@code ClientHttpRequestFactoryBuilder}
   * @param keyHeader the key header Idem's interceptor sets
   * @return a proxy of the builder's interface
   */
  public static Object wrapBuilder(Object builder, String keyHeader) {
    Class<?> type = builderInterface(builder.getClass());
    if (Proxy.isProxyClass(builder.getClass()) && Proxy.getInvocationHandler(builder) instanceof BuilderHandler) {
      return builder;
    }
    return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, new BuilderHandler(builder, type, keyHeader));
  }

  private static Class<?> builderInterface(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      for (Class<?> i : c.getInterfaces()) {
        if (i.getName().equals(BUILDER)) {
          return i;
        }
      }
    }
    throw new IllegalArgumentException(type + " is not a " + BUILDER);
  }

  /**
   * A factory that sends requests carrying {@code keyHeader} through {@code keyed} and the rest
   * through {@code others}.
   *
   * @param others the factory as the app configured it
   * @param keyed its twin that follows no redirect
   * @param keyHeader the key header
   * @return the factory
   */
  public static ClientHttpRequestFactory routing(ClientHttpRequestFactory others, ClientHttpRequestFactory keyed,
      String keyHeader) {
    Objects.requireNonNull(others, "others");
    Objects.requireNonNull(keyed, "keyed");
    Objects.requireNonNull(keyHeader, "keyHeader");
    return (uri, method) -> new RoutedRequest(uri, method, others, keyed, keyHeader);
  }

  private static final class BuilderHandler implements InvocationHandler {
    private final Object target;
    private final Class<?> type;
    private final String keyHeader;

    BuilderHandler(Object target, Class<?> type, String keyHeader) {
      this.target = target;
      this.type = type;
      this.keyHeader = keyHeader;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      if (method.getName().equals("build") && method.getParameterCount() == 0) {
        return InvocationHandler.invokeDefault(proxy, method); // build(null), through the method below
      }
      if (method.getName().equals("build") && method.getParameterCount() == 1) {
        Object settings = args[0] != null ? args[0] : method.getParameterTypes()[0].getMethod("defaults").invoke(null);
        ClientHttpRequestFactory others = (ClientHttpRequestFactory) call(method, args);
        ClientHttpRequestFactory keyed = (ClientHttpRequestFactory) call(method, new Object[] {dontFollow(settings)});
        return routing(others, keyed, keyHeader);
      }
      if (method.getDeclaringClass() == Object.class) {
        return switch (method.getName()) {
          case "equals" -> proxy == args[0];
          case "hashCode" -> System.identityHashCode(proxy);
          default -> "KeyedRedirects(" + target + ")";
        };
      }
      Object result = call(method, args);
      // withCustomizer(...) and the like return a new builder: it keeps the rule.
      return type.isInstance(result) ? wrapBuilder(result, keyHeader) : result;
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
