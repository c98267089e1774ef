package dev.idem.core.internal;

import dev.idem.core.Classification;
import dev.idem.core.Classifier;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.Verdict;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import javax.net.ssl.SSLHandshakeException;

/** The table in {@link Classifier#defaults()}. Stateless. */
public final class DefaultClassifier implements Classifier {
  public static final DefaultClassifier INSTANCE = new DefaultClassifier();

  /**
   * The answers to 2xx, by status minus 200: every successful call is classified, and a verdict is
   * immutable, so one per status serves them all instead of a new reason string for each call.
   */
  private static final List<Optional<Verdict>> SUCCESSES = IntStream.range(200, 300)
      .mapToObj(s -> Optional.of(Verdict.success("HTTP " + s))).toList();

  private DefaultClassifier() {}

  @Override
  public Optional<Verdict> classify(ResponseSnapshot response) {
    int s = response.status();
    if (s >= 200 && s < 300) {
      return SUCCESSES.get(s - 200);
    }
    return Optional.of(switch (s) {
      case 409 -> Verdict.ambiguous("HTTP 409: a request with this key is still in flight");
      // The adapters never follow a keyed request's redirect (each request on the wire must be a
      // journaled attempt), so a 3xx is the attempt's answer. 301, 302 and 303 tell a client to GET
      // another URL, which is how servers answer a POST they have already processed
      // (Post/Redirect/Get): the effect may exist, so it is retried with the key, never FAILED.
      case 301, 302, 303 -> Verdict.ambiguous("HTTP " + s + ": a redirect to GET elsewhere, which may follow the"
          + " request's effect (not followed for a keyed request)");
      // 307 and 308 ask for the same request again at another URL: the server did not act on it.
      case 307, 308 -> Verdict.permanent("HTTP " + s + ": the server asks for the request at another URL"
          + " (not followed for a keyed request)");
      // These say the server did not process the request (timed out reading it, too early, too many,
      // unavailable): retried, and giving up after them alone ends FAILED.
      case 408, 425, 429, 503 -> Verdict.transientFailure("HTTP " + s);
      // A 5xx that does not say "not processed" may come after the effect: a 500 thrown after the
      // commit, a gateway's 502 or 504 for a backend that acted but whose answer was lost or late.
      // Retried all the same, with the key; giving up ends UNCERTAIN, never FAILED.
      case 500 -> Verdict.ambiguous("HTTP 500: the server may have acted before failing (an error after its commit)");
      case 502, 504 -> Verdict.ambiguous("HTTP " + s + ": a gateway lost or gave up waiting for the backend's answer;"
          + " the backend may have acted");
      case 422 -> Verdict.permanent("HTTP 422: the key was used with another payload");
      case 400 -> Verdict.permanent(mentionsKey(response)
          ? "HTTP 400: the server says the idempotency key is missing or malformed (configuration error)"
          : "HTTP 400");
      case 501, 505 -> Verdict.permanent("HTTP " + s);
      default -> s >= 500 ? Verdict.ambiguous("HTTP " + s + ": the server may have acted before failing")
          : Verdict.permanent("HTTP " + s);
    });
  }

  /**
   * Whether this table says {@code response} may follow the request's effect: a 2xx, a 301, 302 or
   * 303, a 409, a 500, 502, 504 or any other 5xx but 501, 503 and 505. Another classifier that
   * retries such a response must call it AMBIGUOUS rather than TRANSIENT, so that giving up after
   * it ends UNCERTAIN, never FAILED.
   *
   * @param response the attempt's response
   * @return true if this table classes it SUCCESS or AMBIGUOUS
   */
  public static boolean mayFollowEffect(ResponseSnapshot response) {
    Classification c = INSTANCE.classify(response).orElseThrow().classification();
    return c == Classification.SUCCESS || c == Classification.AMBIGUOUS;
  }

  private static boolean mentionsKey(ResponseSnapshot response) {
    String body = new String(response.body(), StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
    return body.contains("idempotency") || body.contains("idempotent");
  }

  @Override
  public Optional<Verdict> classify(IOException failure) {
    for (Throwable t : Causes.of(failure)) {
      if (t instanceof RequestNotSentException || t instanceof ConnectException
          || t instanceof UnknownHostException || t instanceof NoRouteToHostException
          || t instanceof SSLHandshakeException || t instanceof HttpConnectTimeoutException) {
        return Optional.of(Verdict.safe("not sent: " + t.getClass().getSimpleName()));
      }
      // The JDK's socket connect reports its timeout as a SocketTimeoutException with this exact
      // message (OkHttp passes it through); no connection means no request byte was written.
      if (t instanceof SocketTimeoutException && "connect timed out".equalsIgnoreCase(t.getMessage())) {
        return Optional.of(Verdict.safe("not sent: connect timed out"));
      }
    }
    if (failure instanceof TransportFailure) {
      return Optional.of(Verdict.ambiguous(failure.getMessage() + "; the request may have been sent"));
    }
    return Optional.of(Verdict.ambiguous("no response: " + failure.getClass().getSimpleName()));
  }
}
