package dev.idem.spring.internal;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.function.BinaryOperator;

/**
 * Wraps one of Boot's client builders (the request factory builder for RestClient and
 * RestTemplate, the connector builder for WebClient) so that every client it builds has a twin
 * built with {@code DONT_FOLLOW} redirects, and answers a client that routes keyed requests to the
 * twin. {@link KeyedRedirects} and {@link KeyedConnectors} differ only in how a request is found to
 * be keyed; the wrapping is here once. Boot 3.5 and 4.0 name the settings type differently, so the
 * builder is reached through its interface by reflection and one jar serves both.
 */
final class RedirectTwins {
  private RedirectTwins() {}

  /** The interface named {@code name} that {@code type} or a superclass implements, or null. */
  static Class<?> builderInterface(Class<?> type, String name) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      for (Class<?> i : c.getInterfaces()) {
        if (i.getName().equals(name)) {
          return i;
        }
      }
    }
    return null;
  }

  /**
   * {@code builder} as a proxy of {@code type} whose {@code build(settings)} returns
   * {@code routing.apply(client, twin)}; builders it returns (withCustomizer and the like) are
   * wrapped the same way. A builder wrapped already is returned as it is.
   *
   * @param label names the proxy in its toString
   */
  static Object wrap(Object builder, Class<?> type, String label, BinaryOperator<Object> routing) {
    if (Proxy.isProxyClass(builder.getClass()) && Proxy.getInvocationHandler(builder) instanceof Handler) {
      return builder;
    }
    return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        new Handler(builder, type, label, routing));
  }

  private record Handler(Object target, Class<?> type, String label, BinaryOperator<Object> routing)
      implements InvocationHandler {
    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      if (method.getName().equals("build") && method.getParameterCount() == 0) {
        return InvocationHandler.invokeDefault(proxy, method); // build(null), through the method below
      }
      if (method.getName().equals("build") && method.getParameterCount() == 1) {
        Object settings = args[0] != null ? args[0] : method.getParameterTypes()[0].getMethod("defaults").invoke(null);
        Object others = call(method, args);
        Object keyed = call(method, new Object[] {dontFollow(settings)});
        return routing.apply(others, keyed);
      }
      if (method.getDeclaringClass() == Object.class) {
        return switch (method.getName()) {
          case "equals" -> proxy == args[0];
          case "hashCode" -> System.identityHashCode(proxy);
          default -> label + "(" + target + ")";
        };
      }
      Object result = call(method, args);
      // withCustomizer(...) and the like return a new builder: it keeps the rule.
      return type.isInstance(result) ? wrap(result, type, label, routing) : result;
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
