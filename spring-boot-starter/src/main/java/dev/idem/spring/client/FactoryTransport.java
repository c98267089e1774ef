package dev.idem.spring.client;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.spi.adapter.AttemptBound;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequest;
import org.springframework.http.client.ClientHttpRequestFactory;

/**
 * Sends journaled operations (a restart's, or queued ones) through a {@link ClientHttpRequestFactory},
 * with no interceptors: each attempt is the journaled snapshot (which holds no secrets), plus the
 * headers the app's function returns for it, plus the key header. Thread-safe if the function and
 * the factory are.
 *
 * <p>Through the starter's own JDK client ({@link BoundedJdkRequests}) every attempt is bounded as
 * {@link AttemptBound} says (the request's journaled timeout, else the retry policy's
 * {@code attemptTimeout}, else 30 s): a queued delivery to a server that accepts and never answers
 * would otherwise hold its outbox worker and claim forever, never retried with its key. Through an
 * app's factory, that factory's own timeouts bound the attempt (Spring offers no per-request
 * timeout on a factory it did not build), as does the policy's {@code attemptTimeout}.
 */
final class FactoryTransport implements Transport {
  private final ClientHttpRequestFactory factory; // null when jdk is set
  private final BoundedJdkRequests jdk; // null when factory is set
  private final ClientSupport support;
  private final Function<RequestSnapshot, Map<String, String>> headers;

  /** Through the app's factory, under its own timeouts. */
  FactoryTransport(ClientHttpRequestFactory factory, ClientSupport support,
      Function<RequestSnapshot, Map<String, String>> headers) {
    this(factory, null, support, headers);
  }

  /** Through the starter's own client, each attempt bounded (see the class comment). */
  FactoryTransport(BoundedJdkRequests jdk, ClientSupport support, Function<RequestSnapshot, Map<String, String>> headers) {
    this(null, jdk, support, headers);
  }

  private FactoryTransport(ClientHttpRequestFactory factory, BoundedJdkRequests jdk, ClientSupport support,
      Function<RequestSnapshot, Map<String, String>> headers) {
    this.factory = factory;
    this.jdk = jdk;
    this.support = support;
    this.headers = headers;
  }

  @Override
  public ResponseSnapshot send(RequestSnapshot request, IdempotencyKey key) throws IOException {
    Map<String, String> extra;
    try {
      extra = headers.apply(request);
    } catch (RuntimeException e) {
      // Before anything is sent (a token service down): a request not sent, which the executor
      // retries or ends FAILED, never an ambiguous attempt that would end UNCERTAIN. The class
      // only: the supplier's own message may quote a credential.
      throw new RequestNotSentException("the resume transport's header supplier threw " + e.getClass().getName()
          + "; nothing was sent", e);
    }
    HttpMethod method = HttpMethod.valueOf(request.method());
    ClientHttpRequest attempt = jdk == null ? factory.createRequest(request.uri(), method)
        : jdk.create(request.uri(), method, bound(request));
    request.headers().forEach((name, values) -> {
      if (!name.equalsIgnoreCase(support.keyHeader()) && (extra == null || extra.keySet().stream()
          .noneMatch(name::equalsIgnoreCase))) {
        attempt.getHeaders().addAll(name, values);
      }
    });
    if (extra != null) {
      extra.forEach((name, value) -> attempt.getHeaders().put(name, List.of(value)));
    }
    attempt.getHeaders().set(support.keyHeader(), support.rules.headerValue(key));
    byte[] body = request.body();
    if (body.length > 0) {
      attempt.getHeaders().setContentLength(body.length);
      attempt.getBody().write(body);
    }
    return CapturedResponse.captureAndClose(attempt.execute());
  }

  /** The response timeout of one attempt through the starter's own client. */
  Duration bound(RequestSnapshot request) {
    // Read per attempt: the executor's policy is fixed once built, and this costs a field read.
    return AttemptBound.of(request, null, support.executor().retryPolicy().attemptTimeout().orElse(null));
  }
}
