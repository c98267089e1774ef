package dev.idem.spring.internal;

import java.lang.reflect.Field;
import java.net.HttpURLConnection;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.client.ClientHttpRequest;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.http.client.SimpleClientHttpRequestFactory;

/**
 * {@code idem.client.attempt-timeout} for the request factories that do not stop on an interrupt.
 * The executor bounds a synchronous attempt by interrupting its thread, which ends a JDK or Reactor
 * request at once, but not Spring's {@link SimpleClientHttpRequestFactory} (HttpURLConnection, the
 * factory of a {@code new RestTemplate()}, with no read timeout by default): a keyed attempt to a
 * target that took the request and never answers would wait for good. So a keyed request of such
 * a factory gets its connection's connect and read timeouts lowered to the attempt timeout (as the
 * OkHttp adapter lowers its call's timeouts); the app's other requests keep the factory as it is.
 * A request is found to be keyed by its key header, as {@link KeyedRedirects} finds it. Apache
 * HttpClient 5's classic factory cannot be bounded per request from here: it gets a WARN instead.
 * Stateless and thread-safe.
 */
final class KeyedAttemptTimeouts {
  private static final Logger LOG = LoggerFactory.getLogger(KeyedAttemptTimeouts.class);
  private static final String SIMPLE_REQUEST = "org.springframework.http.client.SimpleClientHttpRequest";
  private static final String APACHE = "org.springframework.http.client.HttpComponentsClientHttpRequestFactory";

  private KeyedAttemptTimeouts() {}

  /**
   * {@code factory}, with its keyed requests bounded by the attempt timeout if it is Spring's
   * simple factory; else {@code factory} itself.
   *
   * @param attemptTimeout the attempt timeout, read at each keyed request; null for none
   * @param keyHeader the key header Idem's interceptor sets
   * @param where names the client, for the WARN of a factory that cannot be bounded
   * @param attemptTimeoutSet whether the app set an attempt timeout, for that WARN
   */
  static ClientHttpRequestFactory bound(ClientHttpRequestFactory factory, Supplier<Duration> attemptTimeout,
      String keyHeader, String where, boolean attemptTimeoutSet) {
    if (factory instanceof SimpleClientHttpRequestFactory) {
      ClientHttpRequestFactory keyed = (uri, method) -> lower(factory.createRequest(uri, method), attemptTimeout.get());
      return KeyedRedirects.routing(factory, keyed, keyHeader);
    }
    if (attemptTimeoutSet && isA(factory.getClass(), APACHE)) {
      LOG.warn("{} sends through Apache HttpClient 5 (HttpComponentsClientHttpRequestFactory), whose blocking reads"
          + " do not stop on an interrupt: idem.client.attempt-timeout cannot cut its keyed attempts short, and an"
          + " attempt to a server that never answers waits for the client's own response timeout. Give its"
          + " request factory a read timeout no longer than the attempt timeout, or use the JDK factory", where);
    }
    return factory;
  }

  /** Lowers the connect and read timeouts of a simple factory's request to at most {@code timeout}. */
  private static ClientHttpRequest lower(ClientHttpRequest request, Duration timeout) {
    if (timeout == null || !request.getClass().getName().equals(SIMPLE_REQUEST)) {
      return request;
    }
    HttpURLConnection connection;
    try {
      Field f = request.getClass().getDeclaredField("connection");
      f.setAccessible(true);
      connection = (HttpURLConnection) f.get(request);
    } catch (ReflectiveOperationException | RuntimeException e) {
      // A Spring release that keeps the connection elsewhere: the attempt is sent unbounded, as before.
      LOG.debug("cannot reach the HttpURLConnection of {} to bound a keyed attempt", request.getClass(), e);
      return request;
    }
    // At least 1 ms: 0 means "no timeout" to HttpURLConnection.
    int bound = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    connection.setConnectTimeout(lowest(connection.getConnectTimeout(), bound));
    connection.setReadTimeout(lowest(connection.getReadTimeout(), bound));
    return request;
  }

  private static boolean isA(Class<?> type, String name) {
    for (Class<?> c = type; c != null; c = c.getSuperclass()) {
      if (c.getName().equals(name)) {
        return true;
      }
    }
    return false;
  }

  private static int lowest(int current, int bound) {
    return current <= 0 ? bound : Math.min(current, bound);
  }
}
