package dev.idem.spring.internal;

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
    return RedirectTwins.builderInterface(bean.getClass(), BUILDER) != null;
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
    Class<?> type = RedirectTwins.builderInterface(builder.getClass(), BUILDER);
    if (type == null) {
      throw new IllegalArgumentException(builder.getClass() + " is not a " + BUILDER);
    }
    return RedirectTwins.wrap(builder, type, "KeyedConnectors", (others, keyed) ->
        routing((ClientHttpConnector) others, (ClientHttpConnector) keyed));
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
}
