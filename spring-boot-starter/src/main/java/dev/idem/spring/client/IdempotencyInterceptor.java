package dev.idem.spring.client;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.spi.adapter.AdapterBuilder;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.spi.adapter.Settlement;
import dev.idem.core.spi.adapter.Settling;
import java.io.IOException;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.Optional;
import java.util.function.Function;
import org.springframework.http.HttpRequest;
import org.springframework.http.RequestEntity;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * Idem for {@code RestClient} and {@code RestTemplate}: a {@link ClientHttpRequestInterceptor}
 * that sends each keyed call as one logical operation, with one durable key on every attempt.
 * The Spring Boot starter adds it to every {@code RestClient.Builder} and {@code RestTemplate}
 * bean; without the starter:
 *
 * <pre>{@code
 * IdempotencyInterceptor idem = IdempotencyInterceptor.builder(executor).build();
 * RestClient client = RestClient.builder().requestInterceptor(idem).build();
 * Order o = client.post().uri(url).attributes(IdempotentCall.named("create-order")).body(draft)
 *     .retrieve().body(Order.class);
 * }</pre>
 *
 * <p>A call is keyed when it carries an {@link IdempotentCall} attribute, or when it is an
 * untagged POST or PATCH and the {@link UntaggedPolicy} says so; by default
 * {@link UntaggedPolicy#FRESH_KEY}, so that no POST leaves without a key and unjournaled (the
 * operation is then named {@code untagged-post} or {@code untagged-patch}). A keyed call:
 * <ul>
 *   <li>is journaled (key, request, fingerprint) before the first byte is sent, and sent again
 *       with the same key and the same bytes as the executor's policy decides;</li>
 *   <li>returns the server's response for SUCCEEDED, and for FAILED when the server answered (a
 *       permanent 4xx, or 5xx that ran out of attempts with nothing ambiguous), as the client
 *       would have; RestClient's status handlers then treat it as usual;</li>
 *   <li>throws {@link dev.idem.core.OperationUncertainException} when it may have taken effect and
 *       no response said so, {@link dev.idem.core.IdempotencyKeyReusedException} when the key
 *       belongs to another request, and {@link OperationFailedException} when the server says the
 *       key is missing (a configuration error). These are {@link IOException}s: RestClient and
 *       RestTemplate hand them over as the cause of a {@code ResourceAccessException}.</li>
 * </ul>
 * After the call, the request's attributes hold the {@link IdempotentCall} with what Idem did
 * (for an untagged call too): {@code client.post()...exchange((req, res) -> IdempotentCall.from(req.getAttributes()))}.
 * GET, PUT, DELETE and every other method pass through untouched unless tagged. A key header the
 * request already carries is the operation's key (see {@link AdapterSupport}).
 *
 * <p>Add it last among the interceptors: the ones before it (authentication, tracing) run once and
 * their headers are on every attempt; with Spring Framework 6.2, interceptors after it would be
 * skipped by its retries.
 *
 * <p>Thread-safe; share one per executor.
 */
public final class IdempotencyInterceptor implements ClientHttpRequestInterceptor {
  private final ClientSupport support;

  private IdempotencyInterceptor(ClientSupport support) {
    this.support = support;
  }

  /**
   * Starts an interceptor over {@code executor}, which journals and retries every keyed call and
   * stays the app's (this interceptor closes nothing).
   *
   * @param executor the executor
   * @return a builder with the defaults listed on its setters
   */
  public static Builder builder(IdempotentExecutor executor) {
    return new Builder(executor);
  }

  @Override
  public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
      throws IOException {
    IdempotentCall call = IdempotentCall.from(request.getAttributes()).orElse(null);
    Optional<String> name = support.operationName(call, request.getMethod().name(), request.getURI());
    if (name.isEmpty()) {
      return execution.execute(request, body);
    }
    support.checkBody(body.length);
    if (call == null && support.passesUntaggedUnjournaled(request.getHeaders(), body)) {
      // An untagged form body with a credential (an OAuth token call), which the executor would
      // refuse to journal: out once, unjournaled, as under PASS_THROUGH. After the body's bound,
      // as the other clients check it: the same call is refused or sent whichever client makes it.
      return execution.execute(request, body);
    }
    if (call == null) {
      // An untagged call the policy keys: its result is found the same way, among the request's
      // attributes (RestClient's exchange(...) hands that request over).
      call = IdempotentCall.named(name.get());
      try {
        request.getAttributes().put(IdempotentCall.ATTRIBUTE, call);
      } catch (UnsupportedOperationException readOnly) {
        // nowhere to put it; the call still runs
      }
    }
    RequestSnapshot snapshot = support.snapshot(request.getMethod().name(), request.getURI(), request.getHeaders(),
        body);
    Operation op = support.operation(name.get(), call, snapshot, request.getHeaders());
    LiveAttempts transport = new LiveAttempts(request, body, execution, support);
    Settlement settled = Settling.execute(support.rules, op, transport, transport::releaseLast);
    call.settled(settled);
    return transport.responseFor(settled.response());
  }

  /**
   * Journals a request for queued delivery without sending it: an
   * {@link dev.idem.core.outbox.OutboxDispatcher} that registered a {@link #resumeTransport}
   * for {@code operation} sends it, now or after a restart. A name the {@linkplain Builder#outbox
   * outbox} has no transport for is refused before anything is journaled (with the starter: a
   * name neither in {@code idem.outbox.operations} nor registered by an {@code OutboxCustomizer}),
   * since no one would ever send it.
   *
   * @param operation the operation name
   * @param request the request; its body already encoded, as {@code byte[]} or {@code String}
   *     (UTF-8). A key header on it is the operation's key
   * @return the operation's identity
   * @throws IdempotencyException if it cannot be journaled (the key is journaled with another
   *     request, the journal failed, the body is over the cap)
   * @throws IllegalArgumentException if the outbox has no transport for {@code operation}, or the
   *     body is of another type; nothing was journaled
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
   * @throws IllegalArgumentException as for {@link #enqueue(String, RequestEntity)}
   */
  public OperationId enqueue(String operation, IdempotencyKey key, RequestEntity<?> request)
      throws IdempotencyException {
    return support.enqueue(operation, Objects.requireNonNull(key, "key"), request);
  }

  /**
   * A transport for journaled operations (queued ones, or those a restart left PENDING), to
   * register with an {@link dev.idem.core.outbox.OutboxDispatcher} per operation name. It sends
   * the journaled snapshot, without interceptors, plus the headers {@code headers} returns (those
   * the journal does not keep: Authorization and other secrets), through a JDK {@code HttpClient}
   * this interceptor makes when first needed and its resume transports share.
   *
   * <p>Every attempt is bounded: the status, headers and body must arrive within the timeout its
   * request was journaled with ({@link RequestSnapshot#timeout()}), else the executor's retry
   * policy's {@code attemptTimeout}, else {@link dev.idem.core.spi.adapter.AttemptBound#DEFAULT 30 s};
   * an attempt past it fails as a timed-out attempt, which the executor retries with the same key.
   * Never unbounded: an outbox worker waits on each attempt, and a server that accepts and never
   * answers would otherwise hold it and the operation's claim forever. The starter's outbox
   * delivers {@code idem.outbox.operations} through this transport.
   *
   * @param headers returns the headers to add to a journaled request; called once per attempt
   * @return the transport
   */
  public Transport resumeTransport(Function<RequestSnapshot, Map<String, String>> headers) {
    return new FactoryTransport(support.jdkRequests(), support, Objects.requireNonNull(headers, "headers"));
  }

  /**
   * A transport for journaled operations (queued ones, or those a restart left PENDING), to
   * register with an {@link dev.idem.core.outbox.OutboxDispatcher} per operation name. It sends
   * the journaled snapshot through {@code factory}, without interceptors. The factory's own
   * timeouts bound each attempt (and the retry policy's {@code attemptTimeout}, if it has one): give
   * it a read timeout, or an attempt to a server that never answers waits forever, holding its
   * outbox worker; {@link #resumeTransport(Function)} bounds every attempt itself.
   *
   * @param factory the request factory, such as a {@code JdkClientHttpRequestFactory} with a read timeout
   * @return the transport, with no extra headers
   */
  public Transport resumeTransport(ClientHttpRequestFactory factory) {
    return resumeTransport(factory, r -> Map.of());
  }

  /**
   * {@link #resumeTransport(ClientHttpRequestFactory)} with headers the journal does not keep
   * (Authorization and other secrets), added to each attempt. As there, the factory's own timeouts
   * bound each attempt.
   *
   * @param factory the request factory
   * @param headers returns the headers to add to a journaled request; called once per attempt
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
   * What happens to an untagged POST or PATCH.
   *
   * @return the untagged policy
   */
  public UntaggedPolicy untaggedPolicy() {
    return support.rules.untaggedPolicy();
  }

  /**
   * Builds an {@link IdempotencyInterceptor}; an untagged POST or PATCH gets
   * {@link UntaggedPolicy#FRESH_KEY} by default. Not thread-safe.
   */
  public static final class Builder extends AdapterBuilder<Builder> {
    private final IdempotentExecutor executor;
    private Supplier<? extends Collection<OutboxDispatcher>> outbox;

    private Builder(IdempotentExecutor executor) {
      super(UntaggedPolicy.FRESH_KEY);
      this.executor = Objects.requireNonNull(executor, "executor");
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
     * Builds the interceptor.
     *
     * @return the interceptor
     */
    public IdempotencyInterceptor build() {
      return new IdempotencyInterceptor(new ClientSupport(support(executor), bodyCap(), outbox));
    }
  }
}
