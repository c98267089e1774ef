package dev.idem.httpclient;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.spi.adapter.AttemptBound;
import dev.idem.httpclient.internal.AttemptRequests;
import dev.idem.httpclient.internal.AttemptSender;
import dev.idem.httpclient.internal.KeyedClient;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Sends journaled operations again, after a restart, through the wrapped client: each attempt is
 * the journaled snapshot (which holds no secrets), plus the headers the app's supplier returns
 * for it (Authorization and the like, because java.net.http has no interceptors to add them), plus
 * the key header. Get one from {@link IdempotentHttpClient#resumeTransport}, then register it for
 * the operation's name:
 *
 * <pre>{@code
 * OutboxDispatcher outbox = OutboxDispatcher.builder(client.idempotentExecutor())
 *     .register("create-order", client.resumeTransport(r -> Map.of("Authorization", token()), null))
 *     .build()
 *     .start();
 * }</pre>
 *
 * <p>Supplied headers replace snapshot headers of the same name.
 *
 * <h2>Timeouts</h2>
 * Each attempt is bounded, as a live {@code send} of the same request would be: by the timeout the
 * request was sent or queued with ({@code HttpRequest.Builder.timeout}, kept with the operation in
 * the journal, see {@link RequestSnapshot#timeout()}); for a request that had none (or was
 * journaled before timeouts were kept), by the transport's {@code timeout}; without one, by the
 * retry policy's {@code attemptTimeout}; and without that, by 30 s. Never unbounded: a queued
 * delivery is driven by a dispatcher whose lane and lease wait on it, and an attempt to a server that
 * accepts the connection and never answers would otherwise hold them forever, never retried. 30 s
 * is the read timeout Idem's other defaults use (the testkit's {@code StreamingBodyServer}) and
 * half the retry policy's default 60 s deadline, so an attempt that timed out still leaves time
 * for a retry with the same key. An attempt past its timeout fails with
 * {@link java.net.http.HttpTimeoutException}, an ambiguous attempt the executor retries with the
 * same key. The body read for the journal, once the headers are in, is bounded by the same timeout
 * (see "Timeouts" in {@link IdempotentHttpClient}).
 *
 * <p>The HTTP version and {@code expectContinue} of the original request are not journaled: each
 * attempt uses the wrapped client's version, without {@code Expect: 100-continue}.
 *
 * <p>Thread-safe if the supplier is.
 */
public final class ResumeTransport implements Transport, AsyncTransport {
  private final AttemptSender sender;
  private final AdapterSupport support;
  private final Function<RequestSnapshot, Map<String, String>> headers;
  /** The timeout of an attempt whose request had none; see "Timeouts". */
  private final Duration fallbackTimeout;

  /**
   * @param attemptTimeout the retry policy's attemptTimeout, or null
   * @param timeout the app's timeout for attempts whose request had none, or null
   */
  ResumeTransport(KeyedClient client, Duration attemptTimeout, AdapterSupport support,
      Function<RequestSnapshot, Map<String, String>> headers, Duration timeout) {
    this.sender = AttemptSender.forResume(client, attemptTimeout);
    this.support = support;
    this.headers = headers;
    this.fallbackTimeout = AttemptBound.fallback(timeout, attemptTimeout);
  }

  @Override
  public ResponseSnapshot send(RequestSnapshot request, IdempotencyKey key) throws IOException {
    return sender.send(attempt(request, key)).snapshot();
  }

  @Override
  public CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key) {
    HttpRequest attempt;
    try {
      attempt = attempt(request, key);
    } catch (RequestNotSentException e) {
      return CompletableFuture.failedFuture(e);
    }
    // The sender releases each body once captured (nobody reads a resumed one); the executor's
    // cancel (its attempt timeout) reaches the exchange.
    return sender.sendAsync(attempt, r -> { });
  }

  /**
   * The attempt, with the supplier's headers. A failure here (the supplier's token service down, a
   * header value the client refuses) comes before anything is sent: it is a request not sent, which
   * the executor retries or ends FAILED, never an ambiguous attempt that would end UNCERTAIN. Its
   * message names the exception's class only: the supplier's own message may quote a credential.
   */
  private HttpRequest attempt(RequestSnapshot request, IdempotencyKey key) throws RequestNotSentException {
    try {
      return build(request, key);
    } catch (RuntimeException e) {
      throw new RequestNotSentException("the resumed attempt could not be built (" + e.getClass().getName()
          + " from the header supplier or the request builder); nothing was sent", e);
    }
  }

  private HttpRequest build(RequestSnapshot request, IdempotencyKey key) {
    Map<String, List<String>> all = new HashMap<>(request.headers());
    // A snapshot may keep its body's media type beside its headers, not in them (the OkHttp
    // adapter's do: OkHttp keeps it on the body; so does RequestSnapshot.builder().body(bytes, type)):
    // it goes out as the Content-Type, or the JDK sends the body with none.
    if (request.contentType().isPresent()
        && all.keySet().stream().noneMatch(n -> n.equalsIgnoreCase("Content-Type"))) {
      all.put("Content-Type", List.of(request.contentType().get()));
    }
    Map<String, String> extra = headers.apply(request);
    if (extra != null) {
      extra.forEach((name, value) -> {
        all.keySet().removeIf(n -> n.equalsIgnoreCase(name));
        all.put(name, List.of(value));
      });
    }
    AttemptRequests.Settings settings = new AttemptRequests.Settings(
        Optional.of(request.timeout().orElse(fallbackTimeout)), Optional.empty(), false);
    return AttemptRequests.build(request.method(), request.uri(), all, request.body(), settings,
        support.headerName(), support.headerValue(key));
  }
}
