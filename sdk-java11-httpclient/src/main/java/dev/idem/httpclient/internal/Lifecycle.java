package dev.idem.httpclient.internal;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.http.HttpClient;
import java.time.Duration;

/**
 * Forwards the lifecycle methods that {@link HttpClient} gained in Java 21 (shutdown,
 * shutdownNow, awaitTermination, isTerminated) to the wrapped client. The module compiles for Java
 * 17, where they do not exist, so they are found by reflection; on 17 they do nothing.
 */
public final class Lifecycle {
  private Lifecycle() {}

  /** Calls {@code name} on the client if this JVM's HttpClient has it; returns its result or null. */
  public static Object call(HttpClient client, String name, Class<?>[] types, Object... args)
      throws InterruptedException {
    Method m;
    try {
      m = HttpClient.class.getMethod(name, types);
    } catch (NoSuchMethodException e) {
      return null; // Java 17 to 20
    }
    try {
      return m.invoke(client, args);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    } catch (InvocationTargetException e) {
      Throwable t = e.getCause();
      if (t instanceof InterruptedException ie) {
        throw ie;
      }
      if (t instanceof RuntimeException re) {
        throw re;
      }
      if (t instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(t);
    }
  }

  /**
   * Calls a method without parameters ({@code shutdown}, {@code shutdownNow}, {@code close},
   * {@code isTerminated}); none of them waits, so an interrupt is only kept as the thread's flag.
   *
   * @param client the client
   * @param name the method's name
   * @return what it returned; null before Java 21, or if interrupted
   */
  public static Object call(HttpClient client, String name) {
    try {
      return call(client, name, new Class<?>[0]);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /**
   * Whether this JVM's HttpClient has the lifecycle methods (Java 21+).
   *
   * @return true on Java 21 and later
   */
  public static boolean supported() {
    try {
      HttpClient.class.getMethod("isTerminated");
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }

  /** The Duration parameter list of awaitTermination. */
  public static Class<?>[] durationParam() {
    return new Class<?>[] {Duration.class};
  }
}
