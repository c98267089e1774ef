package dev.idem.spring.client;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.spring.internal.SpringHeaders;
import java.io.IOException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.support.HttpRequestWrapper;

/**
 * The transport of one live RestClient/RestTemplate call: every attempt is the app's request as
 * the interceptors before Idem's left it (secrets included), with the same body bytes and the key
 * header, sent through the rest of the chain. It keeps the last attempt's live response, so that
 * the caller gets its real body stream rather than the journal's bounded copy.
 *
 * <p>One per call; the executor uses it from one attempt at a time.
 */
final class LiveAttempts implements Transport {
  private final HttpRequest original;
  private final byte[] body;
  private final ClientHttpRequestExecution execution;
  private final ClientSupport support;
  private CapturedResponse last;

  LiveAttempts(HttpRequest original, byte[] body, ClientHttpRequestExecution execution, ClientSupport support) {
    this.original = original;
    this.body = body;
    this.execution = execution;
    this.support = support;
  }

  @Override
  public ResponseSnapshot send(RequestSnapshot request, IdempotencyKey key) throws IOException {
    releaseLast();
    HttpHeaders headers = SpringHeaders.copyWith(original.getHeaders(), support.keyHeader(),
        support.rules.headerValue(key));
    HttpRequest attempt = new HttpRequestWrapper(original) {
      @Override
      public HttpHeaders getHeaders() {
        return headers;
      }
    };
    last = CapturedResponse.capture(execution.execute(attempt, body));
    return last.snapshot();
  }

  /** The response to hand over for {@code response}: the live one if this call received it, else its snapshot. */
  ClientHttpResponse responseFor(ResponseSnapshot response) {
    if (last != null && last.snapshot() == response) {
      return last.handOver();
    }
    releaseLast();
    return new SnapshotResponse(response);
  }

  /** Closes the last live response unless it was handed over. */
  void releaseLast() {
    if (last != null) {
      last.release();
    }
  }
}
