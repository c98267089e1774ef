package dev.idem.spring.client;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.adapter.AttemptBound;
import dev.idem.core.spi.adapter.CaptureRule;
import dev.idem.core.spi.AttemptTimeoutException;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.spring.internal.KeyedConnectors;
import dev.idem.spring.internal.SpringHeaders;
import java.io.InterruptedIOException;
import java.net.ProtocolException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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
 * <p>A response is read as the other adapters read it ({@link CapturedResponse}): an error body up
 * to one byte over {@link ResponseSnapshot#MAX_CAPTURED_BODY} (the classifier looks into it), a 2xx
 * body only when its declared length fits; the caller gets what was read, then the rest of the
 * live body ({@link BodyPrefix}), and a 2xx of unknown or larger length stays on the wire, unread.
 * A body that breaks off while it is read leaves the attempt answered (its status decides), with
 * no body kept; the caller reads what arrived, then the error that broke it.
 *
 * <p>One per call; the executor uses it from one attempt at a time.
 */
final class ReactiveAttempts implements AsyncTransport {
  private final ClientRequest original;
  private final Map<String, List<String>> headers;
  private final byte[] body;
  private final ExchangeFunction next;
  private final ClientSupport support;
  private final AtomicReference<Attempt> last = new AtomicReference<>();
  /** Set once the caller went away: no one will take a response, including one still on its way. */
  private volatile boolean abandoned;
  /** The last attempt sent. */
  private volatile OnTheWire onTheWire;

  /**
   * One attempt's response: live and unread ({@code prefix} null), or with its body's bounded
   * prefix read (the rest, if any, still on the wire).
   */
  record Attempt(ClientResponse live, BodyPrefix prefix, ResponseSnapshot snapshot) {}

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
    if (abandoned) {
      // Cancelled while the journal wrote the begin and first claim, before the filter held the
      // execution to cancel it: nothing goes out, and the operation stays PENDING with nothing
      // recorded (docs/spring.md: no further attempt is sent once a cancel ends a keyed call).
      return CompletableFuture.failedFuture(new RequestNotSentException("the call was cancelled before this attempt"
          + " was sent; nothing was sent", new InterruptedIOException("the call was cancelled")));
    }
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
    CompletableFuture<ResponseSnapshot> exchange = next.exchange(attempt)
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
    // The executor's own attempt timeout cancels what it is given: that cancel reaches the
    // exchange (toFuture's cancel cancels the subscription), which lets the connection go.
    CompletableFuture<ResponseSnapshot> sent = new CompletableFuture<>();
    exchange.whenComplete((r, e) -> {
      if (e == null) {
        sent.complete(r);
      } else {
        sent.completeExceptionally(e);
      }
    });
    sent.whenComplete((r, e) -> {
      if (sent.isCancelled()) {
        exchange.cancel(true);
      }
    });
    OnTheWire attemptNow = new OnTheWire(request, exchange, sent);
    onTheWire = attemptNow;
    // Set, then check, as abandon() sets its flag, then reads onTheWire: one of the two bounds it.
    if (abandoned) {
      attemptNow.bound();
    }
    return sent;
  }

  /**
   * The attempt on the wire: {@code exchange} is the WebClient's, {@code sent} what the executor
   * waits on. Once its caller went away, nothing else may bound it: no one cancels the exchange,
   * and with no {@code idem.client.attempt-timeout} (the default) an attempt to a target that took
   * the request and never answers would hold its connection, and the operation's single flight,
   * for good.
   */
  private final class OnTheWire {
    private final RequestSnapshot request;
    private final CompletableFuture<ResponseSnapshot> exchange;
    private final CompletableFuture<ResponseSnapshot> sent;
    private final AtomicBoolean bounded = new AtomicBoolean();

    OnTheWire(RequestSnapshot request, CompletableFuture<ResponseSnapshot> exchange,
        CompletableFuture<ResponseSnapshot> sent) {
      this.request = request;
      this.exchange = exchange;
      this.sent = sent;
    }

    /**
     * Bounds the attempt from now on as every resumed or queued attempt is bounded
     * ({@link AttemptBound}: the request's journaled timeout, else the retry policy's attempt
     * timeout, else 30 s), on the executor's scheduler. Past it the exchange is cancelled (its
     * connection closed) and the attempt ends as ambiguous: it may have reached the server.
     * Once per attempt.
     */
    void bound() {
      if (sent.isDone() || !bounded.compareAndSet(false, true)) {
        return;
      }
      Duration bound = AttemptBound.of(request, null,
          support.executor().retryPolicy().attemptTimeout().orElse(null));
      Runnable cut = () -> {
        if (sent.completeExceptionally(new AttemptTimeoutException(bound))) {
          exchange.cancel(true);
        }
      };
      Future<?> timer;
      try {
        timer = support.rules.schedule(cut, bound);
      } catch (RejectedExecutionException e) {
        // The executor is closed: no timer will come, and no one waits for this attempt.
        cut.run();
        return;
      }
      sent.whenComplete((r, e) -> timer.cancel(false));
    }
  }

  private Mono<Attempt> read(ClientResponse r) {
    int status = r.statusCode().value();
    if (status < 100 || status > 599) {
      return r.releaseBody().then(Mono.error(new ProtocolException("HTTP status out of range: " + status)));
    }
    Map<String, List<String>> h = SpringHeaders.toMap(r.headers().asHttpHeaders());
    long declared = r.headers().contentLength().orElse(-1L);
    if (!CaptureRule.readsBody(status, declared, false)) {
      return Mono.just(new Attempt(r, null, CaptureRule.snapshot(status, h, null, declared)));
    }
    // A bounded prefix, as CapturedResponse reads a RestClient's: the classifier and the journal
    // need no more, and the rest of a long body stays on the wire for the caller, so that a long
    // error body neither fills the memory nor fails an attempt the server answered.
    return BodyPrefix.of(r.body(BodyExtractors.toDataBuffers()))
        .map(p -> new Attempt(r, p, CaptureRule.snapshot(status, h, p.whole(), declared)));
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
      if (a.prefix() == null) {
        return a.live().mutate().request(request).build();
      }
      BodyPrefix prefix = a.prefix();
      // body(Function), not body(Flux): that one subscribes to the live body again to release it,
      // which the prefix holds already.
      ClientResponse restored = a.live().mutate().request(request).body(consumed -> prefix.body()).build();
      return prefix.brokeOff() == null ? restored : new BrokenBodyResponse(restored);
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
   * now on, so that their connections go back to the pool. The attempt on the wire is left to
   * answer (the executor records its answer) within its bound ({@link OnTheWire#bound()}), then
   * cancelled.
   */
  void abandon() {
    abandoned = true;
    releaseLast();
    OnTheWire attempt = onTheWire;
    if (attempt != null) {
      attempt.bound();
    }
  }

  /** Releases the last live response's unread body, unless it was handed over. */
  void releaseLast() {
    release(last.getAndSet(null));
  }

  private static void release(Attempt a) {
    if (a == null) {
      return;
    }
    if (a.prefix() != null) {
      a.prefix().release();
    } else {
      a.live().releaseBody().subscribe(v -> { }, e -> { });
    }
  }
}
