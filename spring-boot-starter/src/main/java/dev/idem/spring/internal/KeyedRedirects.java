package dev.idem.spring.internal;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequest;
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
    return RedirectTwins.builderInterface(bean.getClass(), BUILDER) != null;
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
    return wrapBuilder(builder, keyHeader, null);
  }

  /**
   * As {@link #wrapBuilder(Object, String)}, and the twin's requests (all keyed) are bounded by
   * the attempt timeout where the twin does not stop on an interrupt ({@link KeyedAttemptTimeouts}):
   * so a client built in a service's constructor, no bean, is bounded as a bean is.
   *
   * @param attemptTimeout the attempt timeout, read at each keyed request (null from it: none);
   *     null for no bound at all
   */
  public static Object wrapBuilder(Object builder, String keyHeader, Supplier<Duration> attemptTimeout) {
    Objects.requireNonNull(keyHeader, "keyHeader");
    Class<?> type = RedirectTwins.builderInterface(builder.getClass(), BUILDER);
    if (type == null) {
      throw new IllegalArgumentException(builder.getClass() + " is not a " + BUILDER);
    }
    return RedirectTwins.wrap(builder, type, "KeyedRedirects", (others, keyed) -> {
      ClientHttpRequestFactory twin = (ClientHttpRequestFactory) keyed;
      if (attemptTimeout != null) {
        twin = KeyedAttemptTimeouts.every(twin, attemptTimeout);
      }
      return routing((ClientHttpRequestFactory) others, twin, keyHeader);
    });
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
    return new Routing(others, keyed, keyHeader);
  }

  /** A factory of {@link #routing}: a record, so that {@link KeyedAttemptTimeouts} can see its twin. */
  record Routing(ClientHttpRequestFactory others, ClientHttpRequestFactory keyed, String keyHeader)
      implements ClientHttpRequestFactory {
    @Override
    public ClientHttpRequest createRequest(URI uri, HttpMethod method) throws IOException {
      return new RoutedRequest(uri, method, others, keyed, keyHeader);
    }
  }
}
