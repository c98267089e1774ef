package dev.idem.spring.internal;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URI;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.AbstractClientHttpRequestFactoryWrapper;
import org.springframework.http.client.ClientHttpRequest;
import org.springframework.http.client.ClientHttpRequestFactory;

/**
 * Sees through Spring's wrapping request factories ({@link AbstractClientHttpRequestFactoryWrapper}:
 * {@code BufferingClientHttpRequestFactory}, {@code InterceptingClientHttpRequestFactory}, an app's
 * own subclass) to the factory whose requests they wrap, and builds the same wrapper over another
 * factory without touching the app's object: the wrapper's own {@code createRequest(uri, method,
 * delegate)} is called with the new delegate, so a subclass's behaviour (buffering, interceptors)
 * stays as it is. Spring keeps the delegate private and the three-argument method protected, so
 * both are reached by reflection; a Spring release where they moved makes {@link #delegate} answer
 * null and the caller treats the wrapper as a factory it cannot see into. Stateless, thread-safe.
 */
final class FactoryWrappers {
  /** {@code getDelegate()} (Spring 6.2 and later), or null. */
  private static final Method GET_DELEGATE = method("getDelegate");
  /** The delegate's field, for a Spring release without {@code getDelegate()}, or null. */
  private static final Field DELEGATE = field();
  private static final Method CREATE = method("createRequest", URI.class, HttpMethod.class,
      ClientHttpRequestFactory.class);

  private FactoryWrappers() {}

  /** The factory {@code wrapper} creates its requests with, or null if it cannot be reached. */
  static ClientHttpRequestFactory delegate(AbstractClientHttpRequestFactoryWrapper wrapper) {
    if (CREATE == null) {
      return null; // it could be found, but no wrapper over another delegate could be made
    }
    try {
      if (GET_DELEGATE != null) {
        return (ClientHttpRequestFactory) GET_DELEGATE.invoke(wrapper);
      }
      return DELEGATE == null ? null : (ClientHttpRequestFactory) DELEGATE.get(wrapper);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /**
   * A factory that creates {@code wrapper}'s requests over {@code delegate} instead of its own.
   * Only for a wrapper whose {@link #delegate} was found.
   */
  static ClientHttpRequestFactory over(AbstractClientHttpRequestFactoryWrapper wrapper,
      ClientHttpRequestFactory delegate) {
    return new Rewrapped(wrapper, delegate);
  }

  private record Rewrapped(AbstractClientHttpRequestFactoryWrapper wrapper, ClientHttpRequestFactory delegate)
      implements ClientHttpRequestFactory {
    @Override
    public ClientHttpRequest createRequest(URI uri, HttpMethod method) throws IOException {
      try {
        return (ClientHttpRequest) CREATE.invoke(wrapper, uri, method, delegate);
      } catch (InvocationTargetException e) {
        Throwable cause = e.getCause();
        if (cause instanceof IOException io) {
          throw io;
        }
        if (cause instanceof RuntimeException r) {
          throw r;
        }
        if (cause instanceof Error err) {
          throw err;
        }
        throw new IllegalStateException(cause);
      } catch (IllegalAccessException e) {
        throw new IllegalStateException(e); // made accessible when found: not expected
      }
    }

    @Override
    public String toString() {
      return wrapper.getClass().getSimpleName() + "(" + delegate + ")";
    }
  }

  private static Method method(String name, Class<?>... parameters) {
    try {
      Method m = AbstractClientHttpRequestFactoryWrapper.class.getDeclaredMethod(name, parameters);
      m.setAccessible(true);
      return m;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  private static Field field() {
    try {
      Field f = AbstractClientHttpRequestFactoryWrapper.class.getDeclaredField("requestFactory");
      f.setAccessible(true);
      return f;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }
}
