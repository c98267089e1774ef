package dev.idem.spring.client;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import java.io.IOException;
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
 */
final class FactoryTransport implements Transport {
  private final ClientHttpRequestFactory factory;
  private final ClientSupport support;
  private final Function<RequestSnapshot, Map<String, String>> headers;

  FactoryTransport(ClientHttpRequestFactory factory, ClientSupport support,
      Function<RequestSnapshot, Map<String, String>> headers) {
    this.factory = factory;
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
    ClientHttpRequest attempt = factory.createRequest(request.uri(), HttpMethod.valueOf(request.method()));
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
}
