package dev.idem.httpclient.internal;

import dev.idem.core.AttemptRecord;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.httpclient.IdempotentHttpResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLSession;

/**
 * The {@link IdempotentHttpResponse} handed to callers: the final attempt's metadata, the body
 * from the caller's handler, and the operation's facts. {@link #previousResponse()} is always
 * empty: the JDK types intermediate redirect responses by the attempt's byte[] handler, not by
 * {@code T}, and pretending otherwise would be an unchecked lie.
 */
public record BufferedResponse<T>(
    int statusCode,
    HttpHeaders headers,
    T body,
    HttpRequest request,
    URI uri,
    HttpClient.Version version,
    Optional<SSLSession> sslSession,
    OperationId operationId,
    OperationState state,
    boolean replayed,
    boolean fromJournal,
    List<AttemptRecord> attempts) implements IdempotentHttpResponse<T> {

  public BufferedResponse {
    attempts = List.copyOf(attempts);
  }

  @Override
  public Optional<HttpResponse<T>> previousResponse() {
    return Optional.empty();
  }

  /**
   * Status and identity only: never header values, the body, or the URI's user info, query and
   * fragment (the JDK's own response quotes the whole URI; this one is logged by apps that follow
   * Idem's rule that credentials never reach the logs).
   */
  @Override
  public String toString() {
    return "(" + request.method() + " " + RequestSnapshot.redactedUri(uri) + ") " + statusCode + " " + state + (replayed ? " replayed" : "")
        + " " + operationId;
  }
}
