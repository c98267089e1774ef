package dev.idem.spring.client;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.adapter.CaptureRule;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.spring.internal.KeyedConnectors;
import dev.idem.spring.internal.SpringHeaders;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.ProtocolException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The transport of one live WebClient call: every attempt is the app's request with the captured
 * headers and body bytes and the key header, sent through the rest of the filter chain. Nothing
 * here blocks: the executor hands its journal work to its pool, and Reactor's threads only carry
 * bytes.
 *
 * <p>A response is read as the other adapters read it: an error body whole (the classifier looks
 * into it), a 2xx body only when its declared length fits {@link ResponseSnapshot#MAX_CAPTURED_BODY};
 * a 2xx of unknown or larger length stays on the wire, unread, for the caller. A read error body
 * is kept in memory for the caller too, up to {@link #MAX_BUFFERED} bytes. A body that breaks off
 * while it is read leaves the attempt answered (its status decides), with no body kept; the
 * caller reads what arrived, then the error that broke it.
 *
 * <p>One per call; the executor uses it from one attempt at a time.
 */
final class ReactiveAttempts implements AsyncTransport {
  /** The most of an error body held for the caller: a longer one fails the attempt (ambiguous). */
  static final int MAX_BUFFERED = 1 << 20;

  private final ClientRequest original;
  private final Map<String, List<String>> headers;
  private final byte[] body;
  private final ExchangeFunction next;
  private final ClientSupport support;
  private final AtomicReference<Attempt> last = new AtomicReference<>();
  /** Set once the caller went away: no one will take a response, including one still on its way. */
  private volatile boolean abandoned;

  /**
   * One attempt's response: live and unread ({@code body} null), or read into {@code body}; a body
   * that broke off holds what arrived, and {@code brokeOff} the error that ended it.
   */
  record Attempt(ClientResponse live, byte[] body, ResponseSnapshot snapshot, Throwable brokeOff) {}

  ReactiveAttempts(ClientRequest original, Map<String, List<String>> headers, byte[] body, ExchangeFunction next,
      ClientSupport support) {
    this.original = original;
    this.headers = headers;
    this.body = body;
    this.next = next;
    this.support = support;
  }

  @Override
  public CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key) {
    releaseLast();
    String keyValue = support.rules.headerValue(key);
    BodyInserter<byte[], org.springframework.http.client.reactive.ClientHttpRequest> bytes =
        (message, context) -> message.writeWith(Mono.fromSupplier(() -> message.bufferFactory().wrap(body)));
    ClientRequest attempt = ClientRequest.create(original.method(), original.url())
        .headers(h -> {
          SpringHeaders.replaceAll(h, headers);
          h.set(support.keyHeader(), keyValue);
          h.setContentLength(body.length);
        })
        .cookies(c -> c.addAll(original.cookies()))
        .attributes(a -> a.putAll(original.attributes()))
        .httpRequest(original.httpRequest() != null ? original.httpRequest() : r -> { })
        .body(bytes)
        .build();
    return next.exchange(attempt)
        .contextWrite(KeyedConnectors.markKeyed()) // Boot's connector then follows none of its redirects
        .onErrorMap(WebClientRequestException.class, e -> e.getCause() != null ? e.getCause() : e)
        .flatMap(this::read)
        .map(a -> {
          last.set(a);
          // Set, then check: abandon() sets its flag, then takes `last`, so one of the two
          // releases a response that arrives while the caller cancels (exactly one: getAndSet).
          if (abandoned) {
            releaseLast();
          }
          return a.snapshot();
        })
        .toFuture();
  }

  private Mono<Attempt> read(ClientResponse r) {
    int status = r.statusCode().value();
    if (status < 100 || status > 599) {
      return r.releaseBody().then(Mono.error(new ProtocolException("HTTP status out of range: " + status)));
    }
    Map<String, List<String>> h = SpringHeaders.toMap(r.headers().asHttpHeaders());
    long declared = r.headers().contentLength().orElse(-1L);
    if (!CaptureRule.readsBody(status, declared, false)) {
      return Mono.just(new Attempt(r, null, CaptureRule.snapshot(status, h, null, declared), null));
    }
    return Mono.defer(() -> {
      ByteArrayOutputStream received = new ByteArrayOutputStream();
      return r.body(BodyExtractors.toDataBuffers())
          .doOnNext(chunk -> {
            try {
              if (received.size() + (long) chunk.readableByteCount() > MAX_BUFFERED) {
                throw new DataBufferLimitException("an error body over " + MAX_BUFFERED + " bytes");
              }
              byte[] bytes = new byte[chunk.readableByteCount()];
              chunk.read(bytes);
              received.writeBytes(bytes);
            } finally {
              DataBufferUtils.release(chunk);
            }
          })
          .then(Mono.fromSupplier(() -> {
            byte[] bytes = received.toByteArray();
            return new Attempt(r, bytes, CaptureRule.snapshot(status, h, bytes, bytes.length), null);
          }))
          // The status and headers arrived, so the attempt is answered whatever the body does (the
          // CaptureRule, as OkHttp's capture): a body that breaks off is not kept, and the caller
          // reads what arrived, then the same error.
          .onErrorResume(e -> !(e instanceof DataBufferLimitException) && !(e instanceof Error),
              e -> Mono.just(new Attempt(r, received.toByteArray(), CaptureRule.snapshot(status, h, null, declared),
                  e)))
          .onErrorMap(e -> !(e instanceof IOException) && !(e instanceof Error),
              e -> new IOException("reading the response body failed", e));
    });
  }

  /**
   * The response to hand over for {@code response}: the live one if this call received it (with
   * its body restored if it was read), else one made from the snapshot.
   */
  ClientResponse responseFor(ResponseSnapshot response, org.springframework.web.reactive.function.client.ExchangeStrategies
      strategies, IdempotentCall call) {
    Attempt a = last.getAndSet(null);
    CallRequest request = new CallRequest(original, call);
    if (a != null && a.snapshot() == response) {
      if (a.body() == null) {
        return a.live().mutate().request(request).build();
      }
      byte[] kept = a.body();
      Throwable brokeOff = a.brokeOff();
      // body(Function), not body(Flux): that one subscribes to the live body again to release it,
      // which was read already (and, broken off, would only repeat its error, dropped).
      ClientResponse restored = a.live().mutate().request(request)
          .body(consumed -> Flux.defer(() -> Flux.concat(
              Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(kept)),
              brokeOff == null ? Flux.empty() : Flux.error(brokeOff))))
          .build();
      return brokeOff == null ? restored : new BrokenBodyResponse(restored);
    }
    release(a);
    // headers(...) and addAll(String, List): HttpHeaders is a Map on Spring 6.2 and not on 7.
    return ClientResponse.create(org.springframework.http.HttpStatusCode.valueOf(response.status()), strategies)
        .headers(h -> response.headers().forEach(h::addAll))
        .request(request)
        .body(Flux.defer(() -> Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(response.body()))))
        .build();
  }

  /**
   * The caller went away: releases the last live response, and every response that arrives from
   * now on (the attempt on the wire is not cancelled: the executor records its answer), so that
   * their connections go back to the pool.
   */
  void abandon() {
    abandoned = true;
    releaseLast();
  }

  /** Releases the last live response's unread body, unless it was handed over. */
  void releaseLast() {
    release(last.getAndSet(null));
  }

  private static void release(Attempt a) {
    if (a != null && a.body() == null) {
      a.live().releaseBody().subscribe(v -> { }, e -> { });
    }
  }
}
