package dev.idem.spring.internal;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.function.UnaryOperator;

/**
 * Wraps a client builder bean ({@code RestClient.Builder}, {@code WebClient.Builder}: both
 * interfaces) so that Idem's interceptor or filter is put last just before each {@code build()},
 * whatever the app added after it got the builder: the interceptors before Idem's (authentication)
 * then run once and their headers are on every attempt (on Spring Framework 6.2, an interceptor
 * after Idem's would be skipped by its retries). A proxy rather than a subclass, so that methods a
 * later Spring adds to the interface pass through too. Every builder derived from it keeps the
 * rule: {@code clone()}'s, and {@code mutate()}'s of each client it builds (a mutated client's
 * builder starts with Idem's interceptor already in its list, so an interceptor added there would
 * otherwise land after it); for that, {@code build()} returns the client behind a proxy of its
 * interface whose {@code mutate()} is wrapped, and every other method is the client's own. Methods
 * that return the builder or the client itself return the proxy.
 */
public final class LastInChain implements InvocationHandler {
  private final Object target;
  private final Class<?> type;
  private final UnaryOperator<Object> beforeBuild;

  private LastInChain(Object target, Class<?> type, UnaryOperator<Object> beforeBuild) {
    this.target = target;
    this.type = type;
    this.beforeBuild = beforeBuild;
  }

  /**
   * A proxy of {@code target} that runs {@code beforeBuild} on the target before each {@code build()}.
   *
   * @param <T> the builder interface
   * @param type the builder interface
   * @param target the builder
   * @param beforeBuild puts Idem's interceptor or filter last; returns the builder to build
   * @return the proxy
   */
  public static <T> T wrap(Class<T> type, T target, UnaryOperator<Object> beforeBuild) {
    if (Proxy.isProxyClass(target.getClass()) && Proxy.getInvocationHandler(target) instanceof LastInChain) {
      return target;
    }
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        new LastInChain(target, type, beforeBuild)));
  }

  private static <T> T wrapAny(Class<T> type, Object target, UnaryOperator<Object> beforeBuild) {
    return wrap(type, type.cast(target), beforeBuild);
  }

  @Override
  public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    Object receiver = target;
    boolean build = method.getName().equals("build") && method.getParameterCount() == 0;
    if (build) {
      receiver = beforeBuild.apply(target);
    }
    Object result;
    try {
      result = method.invoke(receiver, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
    if (result == target) {
      return proxy;
    }
    if (method.getName().equals("clone") && type.isInstance(result)) {
      return wrapAny(type, result, beforeBuild);
    }
    if (build && method.getReturnType().isInterface() && method.getReturnType().isInstance(result)) {
      return client(method.getReturnType(), result);
    }
    if (method.getName().equals("equals") && args != null && args.length == 1) {
      return proxy == args[0];
    }
    return result;
  }

  /** A client this builder built, behind a proxy whose {@code mutate()} gives a builder wrapped as this one is. */
  private Object client(Class<?> clientType, Object client) {
    return Proxy.newProxyInstance(clientType.getClassLoader(), new Class<?>[] {clientType}, (proxy, method, args) -> {
      if (method.getName().equals("equals") && args != null && args.length == 1) {
        return proxy == args[0];
      }
      Object result;
      try {
        result = method.invoke(client, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
      if (result == client) {
        return proxy;
      }
      if (method.getName().equals("mutate") && method.getParameterCount() == 0 && type.isInstance(result)) {
        return wrapAny(type, result, beforeBuild);
      }
      return result;
    });
  }
}
