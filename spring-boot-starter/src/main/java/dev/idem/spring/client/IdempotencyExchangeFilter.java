package dev.idem.spring.client;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.Outcome;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.spi.adapter.AdapterBuilder;
import dev.idem.core.spi.adapter.Settling;
import dev.idem.spring.internal.SpringHeaders;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import org.springframework.http.RequestEntity;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.ExchangeStrategies;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Schedulers;

/**
 * Idem for {@code WebClient}: an {@link ExchangeFilterFunction} that sends each keyed call as one
 * logical operation, with one durable key on every attempt, and the same rules and answers as
 * {@link IdempotencyInterceptor} (see there). The Spring Boot starter adds it to every
 * {@code WebClient.Builder} bean; without the starter:
 *
 * <pre>{@code
 * IdempotencyExchangeFilter idem = IdempotencyExchangeFilter.builder(executor).build();
 * WebClient client = WebClient.builder().filter(idem).build();
 * Mono<Order> o = client.post().uri(url).attributes(IdempotentCall.named("create-order")).bodyValue(draft)
 *     .retrieve().bodyToMono(Order.class);
 * }</pre>
 *
 * <p>It does not block a Reactor thread on the journal while the journal pool has room (when it
 * is full, the executor records an attempt on the thread that completed it, which for WebClient is
 * an event loop): the body is encoded in memory with the
 * client's codecs, then the operation is journaled on the {@linkplain Builder#journalPool journal
 * pool} (give it the pool the executor uses for its asynchronous journal work, as the starter
 * does), and {@link IdempotentExecutor#executeAsync} does every later journal write on the
 * executor's own pool. The exceptions of the interceptor arrive as the {@code Mono}'s error,
 * unwrapped; a body whose encoded length differs from a {@code Content-Length} the app set (for a
 * streamed body, which the encoders leave as set) fails with a
 * {@link RequestNotSentException} before anything is journaled or sent. The response's {@code request().getAttributes()} hold the {@link IdempotentCall}
 * with what Idem did (for an untagged call too). Cancelling the subscription stops further attempts and leaves the operation PENDING
 * with its key; an attempt already on the wire is left to answer and is recorded, and its response,
 * which no one will read, is released (its connection goes back to the pool). It is bounded from
 * the cancel as a queued attempt is ({@link dev.idem.core.spi.adapter.AttemptBound}: its journaled
 * timeout, else the retry policy's {@code attemptTimeout}, else 30 s, timed by the executor's
 * scheduler): past that, its exchange is cancelled (its connection closed) and it is recorded as
 * ambiguous, so that a target that never answers holds neither a connection nor the operation's
 * single flight for good. Of an error body, at most 64 KiB and one byte is read for the journal;
 * the caller reads those bytes, then the rest of the live body.
 *
 * <p>Add it last among the filters, so that the ones before it (authentication) run once and their
 * headers are on every attempt. Thread-safe.
 */
public final class IdempotencyExchangeFilter implements ExchangeFilterFunction {
  private final ClientSupport support;
  private final Executor journalPool;
  private final ExchangeStrategies strategies;

  private IdempotencyExchangeFilter(Builder b, ClientSupport support) {
    this.support = support;
    this.journalPool = b.journalPool != null ? b.journalPool : Schedulers.boundedElastic()::schedule;
    this.strategies = b.strategies;
  }

  /**
   * Starts a filter over {@code executor}, which journals and retries every keyed call and stays
   * the app's (this filter closes nothing).
   *
   * @param executor the executor
   * @return a builder with the defaults listed on its setters
   */
  public static Builder builder(IdempotentExecutor executor) {
    return new Builder(executor);
  }

  @Override
  public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
    IdempotentCall call = IdempotentCall.from(request.attributes()).orElse(null);
    Optional<String> name;
    try {
      name = support.operationName(call, request.method().name(), request.url());
    } catch (IdempotencyException e) {
      return Mono.error(e);
    }
    if (name.isEmpty()) {
      return next.exchange(request);
    }
    IdempotentCall keyed = call != null ? call : IdempotentCall.named(name.get());
    return BodyCapture.capture(request, strategies, support.maxBodyBytes)
        .onErrorMap(org.springframework.core.io.buffer.DataBufferLimitException.class,
            e -> new IdempotencyException("the request body is over the " + support.maxBodyBytes + " bytes a keyed call"
                + " may journal (maxBodyBytes); nothing was journaled or sent", e))
        .flatMap(captured -> {
          // The capture holds up to one byte past the cap (a larger body already failed above):
          // the interceptor's check decides, so that both clients refuse exactly the same bodies.
          try {
            support.checkBody(captured.bytes().length);
          } catch (IdempotencyException e) {
            return Mono.error(e);
          }
          // The encoders set the length of a single value to what they wrote; a length the app set
          // for a streamed body stays. Every attempt sends the captured bytes with their own length,
          // so one that differs would turn a request the client never delivers whole (the server
          // waits for the rest, or reads the first bytes only) into a complete one.
          long declared = captured.getHeaders().getContentLength();
          if (declared >= 0 && declared != captured.bytes().length) {
            return Mono.error(new RequestNotSentException("the request body of " + request.method() + " "
                + RequestSnapshot.redactedUri(request.url()) + " declared " + declared + " bytes (Content-Length)"
                + " and encoded to " + captured.bytes().length + "; the JDK and OkHttp clients refuse such a request,"
                + " and so does Idem. Nothing was journaled or sent", null));
          }
          if (call == null && support.passesUntaggedUnjournaled(captured.getHeaders(), captured.bytes())) {
            // An untagged form body with a credential (an OAuth token call), which the executor
            // would refuse to journal: out once, unjournaled, as under PASS_THROUGH. After the
            // checks above, as the other clients do: a body cut short of its Content-Length sent
            // whole would be a different request (a truncated password=).
            return next.exchange(unjournaled(request, captured));
          }
          return keyed(request, next, name.get(), keyed, captured);
        });
  }

  private Mono<ClientResponse> keyed(ClientRequest request, ExchangeFunction next, String name, IdempotentCall call,
      BodyCapture captured) {
    Map<String, List<String>> headers = SpringHeaders.toMap(captured.getHeaders());
    byte[] body = captured.bytes();
    ReactiveAttempts transport = new ReactiveAttempts(request, headers, body, next, support);
    CompletableFuture<ClientResponse> result = new CompletableFuture<>();
    AtomicReference<CompletableFuture<Outcome>> execution = new AtomicReference<>();
    Runnable begin = () -> {
      if (result.isDone()) {
        return; // cancelled before begin: nothing journaled, nothing sent
      }
      CompletableFuture<Outcome> started;
      try {
        RequestSnapshot snapshot = support.snapshot(request.method().name(), request.url(), captured.getHeaders(), body);
        Operation op = support.operation(name, call, snapshot, captured.getHeaders());
        // Begin (the journal's durable write) happens here, on the journal pool.
        started = support.executor().executeAsync(op, transport);
      } catch (IdempotencyException | RuntimeException | Error e) {
        result.completeExceptionally(e);
        return;
      }
      execution.set(started);
      if (result.isCancelled()) {
        started.cancel(false);
      }
      Settling.settleAsync(support.rules, started, transport::releaseLast).whenComplete((settled, error) -> {
        if (error != null) {
          result.completeExceptionally(error);
          return;
        }
        call.settled(settled);
        ClientResponse response = transport.responseFor(settled.response(), strategies, call);
        if (!result.complete(response)) {
          release(response); // the caller cancelled meanwhile: responseFor took the live response off `last`
        }
      });
    };
    return Mono.defer(() -> {
      try {
        journalPool.execute(begin);
      } catch (RejectedExecutionException e) {
        return Mono.error(new IdempotencyException("the journal pool refused the call; nothing was journaled or sent",
            e));
      }
      // A response completed just as the caller cancels is discarded by fromFuture: release it.
      return Mono.fromFuture(result).doOnDiscard(ClientResponse.class, IdempotencyExchangeFilter::release);
    }).doFinally(signal -> {
      // After the cancel went upstream (doFinally, not doOnCancel, which runs before): fromFuture
      // has cancelled `result` itself, knowing it was cancelled, so the CancellationException is
      // not reported as an error dropped. `result` is cancelled before `execution` is read, and
      // begin sets `execution` before it checks `result`: one of the two cancels the execution.
      if (signal == SignalType.CANCEL) {
        result.cancel(false);
        CompletableFuture<Outcome> started = execution.get();
        if (started != null) {
          started.cancel(false);
        }
        transport.abandon();
      }
    });
  }

  /**
   * The request as the app made it, with the captured bytes as its body: the capture has run its
   * body inserter once already, and a body that streams from a one-shot source cannot be encoded twice.
   */
  private static ClientRequest unjournaled(ClientRequest request, BodyCapture captured) {
    byte[] body = captured.bytes();
    Map<String, List<String>> headers = SpringHeaders.toMap(captured.getHeaders());
    return ClientRequest.from(request)
        .headers(h -> {
          SpringHeaders.replaceAll(h, headers);
          h.setContentLength(body.length);
        })
        .body((message, context) -> message.writeWith(Mono.fromSupplier(() -> message.bufferFactory().wrap(body))))
        .build();
  }

  private static void release(ClientResponse response) {
    response.releaseBody().subscribe(v -> { }, e -> { });
  }

  /**
   * Journals a request for queued delivery without sending it; see
   * {@link IdempotencyInterceptor#enqueue(String, RequestEntity)}. It writes to the journal on the
   * calling thread: call it off Reactor's threads.
   *
   * @param operation the operation name
   * @param request the request, its body a {@code byte[]} or a {@code String}
   * @return the operation's identity
   * @throws IdempotencyException if it cannot be journaled
   * @throws IllegalArgumentException if the {@linkplain Builder#outbox outbox} has no transport for
   *     {@code operation} (the starter's: not in idem.outbox.operations nor registered by an
   *     OutboxCustomizer), or the body is of another type; nothing was journaled
   */
  public OperationId enqueue(String operation, RequestEntity<?> request) throws IdempotencyException {
    return support.enqueue(operation, null, request);
  }

  /**
   * {@link #enqueue(String, RequestEntity)} with a key of the app's own.
   *
   * @param operation the operation name
   * @param key the key
   * @param request the request, its body a {@code byte[]} or a {@code String}
   * @return the operation's identity
   * @throws IdempotencyException if it cannot be journaled
   */
  public OperationId enqueue(String operation, IdempotencyKey key, RequestEntity<?> request)
      throws IdempotencyException {
    return support.enqueue(operation, Objects.requireNonNull(key, "key"), request);
  }

  /**
   * A transport for journaled operations, to register with an
   * {@link dev.idem.core.outbox.OutboxDispatcher} (whose workers may block), through a JDK
   * {@code HttpClient} this filter's resume transports share, every attempt bounded by its
   * request's journaled timeout, else the retry policy's {@code attemptTimeout}, else 30 s; see
   * {@link IdempotencyInterceptor#resumeTransport(Function)}.
   *
   * @param headers returns the headers to add to a journaled request (secrets); called once per attempt
   * @return the transport
   */
  public Transport resumeTransport(Function<RequestSnapshot, Map<String, String>> headers) {
    return new FactoryTransport(support.jdkRequests(), support, Objects.requireNonNull(headers, "headers"));
  }

  /**
   * A transport for journaled operations, to register with an
   * {@link dev.idem.core.outbox.OutboxDispatcher} (whose workers may block); see
   * {@link IdempotencyInterceptor#resumeTransport(ClientHttpRequestFactory, Function)}. The factory's own
   * timeouts bound each attempt: give it a read timeout.
   *
   * @param factory the request factory, such as a {@code JdkClientHttpRequestFactory} with a read timeout
   * @param headers returns the headers to add to a journaled request (secrets); called once per attempt
   * @return the transport
   */
  public Transport resumeTransport(ClientHttpRequestFactory factory,
      Function<RequestSnapshot, Map<String, String>> headers) {
    return new FactoryTransport(Objects.requireNonNull(factory, "factory"), support,
        Objects.requireNonNull(headers, "headers"));
  }

  /**
   * The executor that journals and drives keyed calls.
   *
   * @return the executor
   */
  public IdempotentExecutor executor() {
    return support.executor();
  }

  /**
   * Builds an {@link IdempotencyExchangeFilter}; an untagged POST or PATCH gets
   * {@link UntaggedPolicy#FRESH_KEY} by default. Not thread-safe.
   */
  public static final class Builder extends AdapterBuilder<Builder> {
    private final IdempotentExecutor executor;
    private Supplier<? extends Collection<OutboxDispatcher>> outbox;
    private Executor journalPool;
    private ExchangeStrategies strategies = ExchangeStrategies.withDefaults();

    private Builder(IdempotentExecutor executor) {
      super(UntaggedPolicy.FRESH_KEY);
      this.executor = Objects.requireNonNull(executor, "executor");
    }

    /**
     * Where each operation is journaled before its first attempt (a durable write), off Reactor's
     * threads; default Reactor's {@code Schedulers.boundedElastic()}. Give it the executor's own
     * {@linkplain IdempotentExecutor.Builder#asyncExecutor asynchronous pool}, as the starter does.
     *
     * @param pool the pool; it stays the app's
     * @return this builder
     */
    public Builder journalPool(Executor pool) {
      this.journalPool = Objects.requireNonNull(pool, "pool");
      return this;
    }

    /**
     * The codecs that encode request bodies (once, to journal their bytes) and decode responses
     * made from the journal; default {@code ExchangeStrategies.withDefaults()}. Give the
     * {@code WebClient}'s own, so that the journaled bytes are those its encoders write; the
     * starter does that for every {@code WebClient.Builder} bean.
     *
     * @param strategies the strategies
     * @return this builder
     */
    public Builder exchangeStrategies(ExchangeStrategies strategies) {
      this.strategies = Objects.requireNonNull(strategies, "strategies");
      return this;
    }

    /**
     * The outboxes that deliver what {@code enqueue} journals: {@code enqueue} then refuses, with an
     * {@link IllegalArgumentException} and before anything is journaled, an operation name none of
     * them has a transport for (the union of their {@link OutboxDispatcher#operationNames()}), which
     * no one would ever send. Looked up at each {@code enqueue}, since an outbox is usually built
     * after this, with its {@code resumeTransport}; while it returns null or an empty collection,
     * every name is taken. Default: none, every name is taken (what delivers it, an outbox elsewhere
     * or {@code resumePending}, is the app's). The starter sets every {@link OutboxDispatcher} bean.
     *
     * @param outboxes returns the outboxes, or null or none for none (yet)
     * @return this builder
     * @throws NullPointerException if {@code outboxes} is null
     */
    public Builder outboxes(Supplier<? extends Collection<OutboxDispatcher>> outboxes) {
      this.outbox = Objects.requireNonNull(outboxes, "outboxes");
      return this;
    }

    /**
     * Builds the filter.
     *
     * @return the filter
     */
    public IdempotencyExchangeFilter build() {
      return new IdempotencyExchangeFilter(this, new ClientSupport(support(executor), bodyCap(), outbox));
    }
  }
}
