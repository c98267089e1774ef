package dev.idem.spring.internal;

import java.io.IOException;
import java.lang.reflect.Field;
import java.net.HttpURLConnection;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.AbstractClientHttpRequestFactoryWrapper;
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
 * A request is found to be keyed by its key header, as {@link KeyedRedirects} finds it.
 *
 * <p>The timeouts are lowered where the HttpURLConnection is made, whatever sits over it: the
 * keyed twin of the starter's own {@link KeyedRedirects} (Boot's RestTemplateBuilder and
 * RestClient.Builder with {@code spring.http.client.factory=simple}), and the simple factory inside
 * Spring's wrapping factories ({@code BufferingClientHttpRequestFactory} and the like,
 * {@link FactoryWrappers}). Apache HttpClient 5's classic factory cannot be bounded per request from
 * here, nor can a factory Idem cannot see into: each gets a WARN instead. Thread-safe.
 */
final class KeyedAttemptTimeouts {
  private static final Logger LOG = LoggerFactory.getLogger(KeyedAttemptTimeouts.class);
  private static final String SIMPLE_REQUEST = "org.springframework.http.client.SimpleClientHttpRequest";
  private static final String APACHE = "org.springframework.http.client.HttpComponentsClientHttpRequestFactory";
  /** Spring's factories whose requests end on an interrupt: nothing to lower. */
  private static final Set<String> INTERRUPTIBLE = Set.of(
      "org.springframework.http.client.JdkClientHttpRequestFactory",
      "org.springframework.http.client.ReactorClientHttpRequestFactory",
      "org.springframework.http.client.ReactorNettyClientRequestFactory",
      "org.springframework.http.client.JettyClientHttpRequestFactory");
  /**
   * Whether the WARN for an HttpURLConnection out of reach was logged: once per JVM, since the
   * cause (a Spring release that moved the field) is the same for every request.
   */
  private static final AtomicBoolean UNREACHABLE_WARNED = new AtomicBoolean();

  private KeyedAttemptTimeouts() {}

  /**
   * {@code factory}, with its keyed requests bounded by the attempt timeout where they are made by
   * Spring's simple factory (itself, or inside a wrapper Idem can see through); else
   * {@code factory} itself, with a WARN if it may not stop on an interrupt.
   *
   * @param attemptTimeout the attempt timeout, read at each keyed request; null for none
   * @param keyHeader the key header Idem's interceptor sets
   * @param where names the client, for the WARN of a factory that cannot be bounded
   * @param attemptTimeoutSet whether the app set an attempt timeout, for that WARN
   */
  static ClientHttpRequestFactory bound(ClientHttpRequestFactory factory, Supplier<Duration> attemptTimeout,
      String keyHeader, String where, boolean attemptTimeoutSet) {
    List<ClientHttpRequestFactory> opaque = new ArrayList<>(1);
    ClientHttpRequestFactory bounded = bound(factory, attemptTimeout, keyHeader, opaque);
    if (attemptTimeoutSet) {
      opaque.forEach(f -> warn(f, factory, where));
    }
    return bounded;
  }

  /**
   * {@code factory}, with every request bounded where Spring's simple factory makes it: for a
   * factory that only keyed requests reach (the twin of {@link KeyedRedirects}). No WARN here:
   * the client's bean, if any, gets it.
   */
  static ClientHttpRequestFactory every(ClientHttpRequestFactory factory, Supplier<Duration> attemptTimeout) {
    return bound(factory, attemptTimeout, null, new ArrayList<>(1));
  }

  /**
   * @param keyHeader null when every request is keyed
   * @param opaque collects the factories that may not stop on an interrupt and cannot be bounded
   */
  private static ClientHttpRequestFactory bound(ClientHttpRequestFactory factory, Supplier<Duration> attemptTimeout,
      String keyHeader, List<ClientHttpRequestFactory> opaque) {
    if (factory instanceof Lowering) {
      return factory;
    }
    if (factory instanceof SimpleClientHttpRequestFactory) {
      ClientHttpRequestFactory lowering = new Lowering(factory, attemptTimeout);
      return keyHeader == null ? lowering : KeyedRedirects.routing(factory, lowering, keyHeader);
    }
    if (factory instanceof KeyedRedirects.Routing routing) {
      // Only the twin gets keyed requests, and every request it gets is keyed.
      ClientHttpRequestFactory keyed = bound(routing.keyed(), attemptTimeout, null, opaque);
      return keyed == routing.keyed() ? factory
          : KeyedRedirects.routing(routing.others(), keyed, routing.keyHeader());
    }
    if (factory instanceof AbstractClientHttpRequestFactoryWrapper wrapper) {
      ClientHttpRequestFactory delegate = FactoryWrappers.delegate(wrapper);
      if (delegate == null) {
        opaque.add(factory);
        return factory;
      }
      ClientHttpRequestFactory bounded = bound(delegate, attemptTimeout, keyHeader, opaque);
      return bounded == delegate ? factory : FactoryWrappers.over(wrapper, bounded);
    }
    if (!ClientPostProcessor.isNamed(factory.getClass(), INTERRUPTIBLE)) {
      opaque.add(factory);
    }
    return factory;
  }

  private static void warn(ClientHttpRequestFactory opaque, ClientHttpRequestFactory factory, String where) {
    if (ClientPostProcessor.isNamed(opaque.getClass(), Set.of(APACHE))) {
      LOG.warn("{} sends through Apache HttpClient 5 (HttpComponentsClientHttpRequestFactory), whose blocking reads"
          + " do not stop on an interrupt: idem.client.attempt-timeout cannot cut its keyed attempts short, and an"
          + " attempt to a server that never answers waits for the client's own response timeout. Give its"
          + " request factory a read timeout no longer than the attempt timeout, or use the JDK factory", where);
    } else {
      LOG.warn("{} sends through a request factory Idem cannot see into ({}{}): idem.client.attempt-timeout cannot"
          + " lower its timeouts, and if its blocking reads do not stop on an interrupt, a keyed attempt to a server"
          + " that never answers waits for the client's own read timeout. Give it a read timeout no longer than"
          + " the attempt timeout, or use the JDK factory", where, opaque.getClass().getName(),
          opaque == factory ? "" : ", inside " + factory.getClass().getName());
    }
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
      // A Spring release that keeps the connection elsewhere: the attempt is sent unbounded, as
      // before; said once, at WARN, since every keyed attempt of this client now goes unbounded.
      if (UNREACHABLE_WARNED.compareAndSet(false, true)) {
        LOG.warn("cannot reach the HttpURLConnection of {} ({}): idem.client.attempt-timeout cannot bound the keyed"
            + " attempts of Spring's SimpleClientHttpRequestFactory, and an attempt to a server that never answers"
            + " waits for the factory's own read timeout. Give the factory a read timeout no longer than the attempt"
            + " timeout, or use the JDK factory", request.getClass().getName(), e.toString());
      }
      return request;
    }
    // At least 1 ms: 0 means "no timeout" to HttpURLConnection.
    int bound = (int) Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toMillis()));
    connection.setConnectTimeout(lowest(connection.getConnectTimeout(), bound));
    connection.setReadTimeout(lowest(connection.getReadTimeout(), bound));
    return request;
  }

  /** A simple factory whose every request is bounded by the attempt timeout read at its creation. */
  private record Lowering(ClientHttpRequestFactory simple, Supplier<Duration> attemptTimeout)
      implements ClientHttpRequestFactory {
    @Override
    public ClientHttpRequest createRequest(URI uri, HttpMethod method) throws IOException {
      return lower(simple.createRequest(uri, method), attemptTimeout.get());
    }

    @Override
    public String toString() {
      return "attempt-timeout bounded " + simple;
    }
  }

  private static int lowest(int current, int bound) {
    return current <= 0 ? bound : Math.min(current, bound);
  }
}
