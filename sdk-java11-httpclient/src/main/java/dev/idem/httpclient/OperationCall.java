package dev.idem.httpclient;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.RetryPolicy;
import dev.idem.httpclient.internal.CallEngine;
import dev.idem.httpclient.internal.OperationFactory;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandler;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * One logical operation sent through an {@link IdempotentHttpClient}: its name, scope, key,
 * reference and retry policy, then the request. java.net.http requests have no tags, so this is
 * how a call says which operation it is:
 *
 * <pre>{@code
 * OperationCall call = client.operation("create-order").scope("tenant-42").reference("cart-1234");
 * HttpResponse<String> r = call.send(request, BodyHandlers.ofString());
 * }</pre>
 *
 * <p>The key is fixed the first time {@link #key()}, {@link #send} or {@link #sendAsync} runs
 * (a fresh random key unless {@link #key(IdempotencyKey)} gave one), and sending the same call
 * again reuses it. So an app that retries a call on its own, or sends it again after
 * {@link dev.idem.core.OperationPendingException}, still sends one operation; sending it with a
 * different request is refused as key reuse, before anything goes out. Any method may be sent this
 * way. A key header already on the request is the app's key: the call adopts it if it has no key
 * yet, and refuses to send if it has a different one (see
 * {@link dev.idem.core.spi.adapter.AdapterSupport}).
 *
 * <p>For one key per business reference, with nothing stored by the app, use
 * {@link #forReference}: {@code client.operation("create-order").forReference("cart-42")}. The
 * executor derives the key from the reference with its
 * {@link dev.idem.core.IdempotentExecutor.Builder#referenceKeySecret secret}, so every submission
 * of the same reference, in this process or after a restart, gets the same key and the server runs
 * it once. {@link #reference} only labels the operation for lookups.
 *
 * <p>Setters must not be called after the key is fixed. Thread-safe once configured: concurrent
 * sends of one call share one operation (the executor lets one of them send).
 */
public final class OperationCall {
  private final CallEngine engine;
  private final String name;
  private String scope = OperationId.DEFAULT_SCOPE;
  private String reference;
  private RetryPolicy policy;
  private IdempotencyKey key;
  private boolean keyFromReference;
  private boolean fixed;
  /** Makes this call's operations; knows its policy before the body is read, which it bounds. */
  private final OperationFactory factory = new OperationFactory() {
    @Override
    public Operation make(RequestSnapshot snapshot, List<String> keyHeaderValues) throws IdempotencyException {
      return toOperation(snapshot, keyHeaderValues);
    }

    @Override
    public Optional<RetryPolicy> policy() {
      synchronized (OperationCall.this) {
        return Optional.ofNullable(policy);
      }
    }
  };

  OperationCall(CallEngine engine, String name) {
    this.engine = engine;
    this.name = Objects.requireNonNull(name, "name");
  }

  /**
   * The caller or tenant; default {@value OperationId#DEFAULT_SCOPE}.
   *
   * @param scope the scope, 1 to 200 characters
   * @return this call
   */
  public synchronized OperationCall scope(String scope) {
    checkOpen();
    this.scope = Objects.requireNonNull(scope, "scope");
    return this;
  }

  /**
   * A key the app stored or derived; default a fresh random key, made once.
   *
   * @param key the key
   * @return this call
   */
  public synchronized OperationCall key(IdempotencyKey key) {
    checkOpen();
    if (keyFromReference) {
      throw new IllegalStateException("this call derives its key from its reference (forReference)");
    }
    this.key = Objects.requireNonNull(key, "key");
    return this;
  }

  /**
   * The app's own reference, to find the operation again after a restart; default none. This is a
   * label for lookups and does NOT deduplicate: two calls with the same reference have two keys,
   * and the server runs both. For one key per reference, use {@link #forReference}.
   *
   * @param reference the reference, 1 to 200 characters, no personal data
   * @return this call
   */
  public synchronized OperationCall reference(String reference) {
    checkOpen();
    this.reference = Objects.requireNonNull(reference, "reference");
    return this;
  }

  /**
   * Derives the key from a business reference: the executor computes HMAC-SHA256 over scope, name
   * and reference with its {@link dev.idem.core.IdempotentExecutor.Builder#referenceKeySecret
   * secret} when it begins the operation, so every call for the same reference gets the same key,
   * even after a restart with an empty journal. Sending fails with {@link IllegalStateException}
   * before anything is journaled or sent if the executor has no secret. The reference is journaled
   * as with {@link #reference}.
   *
   * @param reference the business reference, 1 to 200 characters, no personal data
   * @return this call
   * @throws IllegalStateException if a key was given with {@link #key(IdempotencyKey)}, or the key
   *     is already fixed
   */
  public synchronized OperationCall forReference(String reference) {
    checkOpen();
    if (key != null) {
      throw new IllegalStateException("this call already has a key of its own; a derived key would replace it");
    }
    this.reference = Objects.requireNonNull(reference, "reference");
    this.keyFromReference = true;
    return this;
  }

  /**
   * A retry policy for this operation only; default the executor's.
   *
   * @param policy the policy
   * @return this call
   */
  public synchronized OperationCall policy(RetryPolicy policy) {
    checkOpen();
    this.policy = Objects.requireNonNull(policy, "policy");
    return this;
  }

  /**
   * The key, fixing it now if it was not yet: store it before sending if you want to.
   *
   * @return the key, fixed from now on
   * @throws IllegalStateException if the key is derived from the reference ({@link #forReference}):
   *     the executor derives it when it begins the operation; read it from the response or exception
   */
  public synchronized IdempotencyKey key() {
    if (keyFromReference) {
      throw new IllegalStateException("the key of this call is derived from its reference by the executor;"
          + " read it from IdempotentHttpResponse or the exception");
    }
    if (key == null) {
      key = IdempotencyKey.generate();
    }
    fixed = true;
    return key;
  }

  /**
   * The identity this call sends under; fixes the key.
   *
   * @return the identity this call sends under
   * @throws IllegalStateException if the key is derived from the reference; see {@link #key()}
   */
  public synchronized OperationId operationId() {
    return new OperationId(scope, name, key());
  }

  /**
   * Sends the operation on the calling thread: journal, then attempts with one key, waiting
   * between them with the executor's sleeper.
   *
   * @param <T> the body type
   * @param request the request, sent again as it is on every attempt
   * @param handler reads the final response's body
   * @return the final response: SUCCEEDED, or FAILED with the server's answer
   * @throws dev.idem.core.IdempotencyKeyReusedException the key belongs to another request
   *     (refused locally) or the server answered "key reused" (422 by default, see
   *     {@link dev.idem.core.ProtocolStatuses}), now or on an earlier execution
   * @throws dev.idem.core.OperationFailedException FAILED without a response to return (for
   *     example the connection was refused on every attempt), or the server's "key missing" (400 by
   *     default)
   * @throws dev.idem.core.OperationUncertainException UNCERTAIN: it may have taken effect
   * @throws dev.idem.core.OperationPendingException still PENDING (another owner holds it, or the
   *     host's circuit breaker is open or its retry budget empty, or the client was shut down or
   *     closed during the call: a backoff under way then ends at once, and nothing more is sent)
   * @throws dev.idem.core.spi.RequestNotSentException the body publisher failed, or published fewer
   *     or more bytes than its {@code contentLength()} declares (refused by the JDK client too);
   *     nothing was journaled or sent
   * @throws java.net.http.HttpTimeoutException the body publisher did not publish the whole body
   *     within the request's {@code timeout}, else the policy's {@code attemptTimeout}, else its
   *     {@code deadline} (see "Timeouts" on {@link IdempotentHttpClient}); nothing was journaled
   *     or sent
   * @throws InterruptedException interrupted (a backoff under way ends at once); the operation stays PENDING with its key, unless the
   *     server had answered: then the journal holds the operation's end, and the message says which
   *     (SUCCEEDED, say) and that it is not sent again; the rest of the response's body is not read
   * @throws IllegalArgumentException the body is above {@code maxBodyBytes}; nothing was sent
   */
  public <T> IdempotentHttpResponse<T> send(HttpRequest request, BodyHandler<T> handler)
      throws IOException, InterruptedException {
    return engine.send(request, handler, factory);
  }

  /**
   * Journals the operation for queued delivery without sending it: an
   * {@link dev.idem.core.outbox.OutboxDispatcher} that registered
   * {@link IdempotentHttpClient#resumeTransport()} for this call's name delivers it, now or after a
   * restart, with this call's key. Wait for it with {@code outbox.await(id)}. The body publisher is
   * read once, here, up to the client's {@code maxBodyBytes}; secret headers stay out of the journal
   * and the resume transport's header supplier adds them again.
   *
   * @param request the request to deliver, with its body
   * @return the operation's identity (an existing one if this operation was journaled before)
   * @throws dev.idem.core.IdempotencyKeyReusedException if the key is journaled with another request
   * @throws dev.idem.core.spi.RequestNotSentException if the body publisher fails, or publishes
   *     fewer or more bytes than its {@code contentLength()} declares; nothing was journaled
   * @throws java.net.http.HttpTimeoutException if the body publisher is slower than the bound
   *     {@link #send} names; nothing was journaled
   * @throws dev.idem.core.IdempotencyException if the request's key header breaks the key-header
   *     rule, or the journal fails
   * @throws IOException on any other failure to read the body
   * @throws InterruptedException if interrupted while the body is read; nothing was journaled
   * @throws IllegalArgumentException if the body is above {@code maxBodyBytes}, or the request
   *     cannot be journaled faithfully
   */
  public OperationId enqueue(HttpRequest request) throws IOException, InterruptedException {
    return engine.enqueue(request, factory);
  }

  /**
   * Sends the operation without blocking a thread, not even during backoff (the executor's
   * scheduler waits). The future fails with the exceptions listed on {@link #send}, except that
   * there is no interrupt.
   *
   * <p>The request's body is read, and the operation journaled, on the calling thread before this
   * returns (the send and everything after it are not): a {@code shutdown()}, a {@code close()}
   * or a {@code main} that returns right after finds the operation in the journal, PENDING with its
   * key, for a resume. A body publisher that reads a stream as it is subscribed to
   * ({@code BodyPublishers.ofInputStream}) therefore holds the caller for that read, bounded as
   * the README's "Bodies" says; give such a body from a thread that may block, or as bytes.
   *
   * <p>Cancelling the future before the operation settled stops it as {@code HttpClient}'s own
   * cancel stops an exchange: the attempt on the wire, if any, is cancelled (its connection
   * closed) and recorded as ambiguous, since the server may have acted on it; no further attempt
   * is sent (a backoff under way ends at once, its timer cancelled); and the operation is left
   * PENDING with its key, for a resume or an
   * {@link dev.idem.core.outbox.OutboxDispatcher}. Cancelling it after the operation settled, while
   * {@code handler} still reads the final response's body (the future completes when the
   * handler's body is ready: for {@code ofString}, at the end of the body), stops that body, as
   * the JDK client's cancel does; the journal keeps the operation's outcome (SUCCEEDED, say), and
   * it is not sent again: find it by its key for the stored response.
   *
   * <p>Completing the future yourself, as {@code future.orTimeout(...)} does when its time is up
   * (or {@code completeExceptionally}), is not a cancel: you stop waiting, the operation does not
   * stop. As with the JDK client's own future, the execution goes on in the background with the
   * same key (its retries, its backoffs) and ends in the journal as it would have: SUCCEEDED,
   * say, although you saw a {@code TimeoutException}. Find it by its key for the outcome, or cancel
   * the future instead to leave it PENDING. The client's {@code shutdown()} still stops such an
   * execution, PENDING with its key, and {@code awaitTermination} waits for it. To bound the call
   * itself, use the retry policy's {@code deadline}.
   *
   * @param <T> the body type
   * @param request the request, sent again as it is on every attempt
   * @param handler reads the final response's body
   * @return the response, when the operation settles
   */
  public <T> CompletableFuture<IdempotentHttpResponse<T>> sendAsync(HttpRequest request, BodyHandler<T> handler) {
    return engine.sendAsync(request, handler, factory);
  }

  private synchronized Operation toOperation(RequestSnapshot snapshot, List<String> keyHeaderValues)
      throws IdempotencyException {
    Operation.Builder b;
    if (keyFromReference) {
      // Two sources for one key (the reference's and the request's header): one of them is a bug.
      if (!keyHeaderValues.isEmpty()) {
        throw new IdempotencyException("operation '" + name + "' derives its key from its reference, and the"
            + " request also carries a " + engine.support().headerName() + " header; send one key. Nothing was sent",
            null);
      }
      fixed = true;
      b = Operation.forReference(name, reference, snapshot).scope(scope);
    } else {
      // The adapter layer's rule: a key header on the request is the app's key; it must agree with a
      // key this call already has (given, read, or sent before).
      IdempotencyKey resolved = engine.support().keyFor(keyHeaderValues, key);
      if (resolved != null) {
        key = resolved;
      }
      b = Operation.builder(name, snapshot).scope(scope).key(key());
      if (reference != null) {
        b.reference(reference);
      }
    }
    if (policy != null) {
      b.policy(policy);
    }
    return b.build();
  }

  private void checkOpen() {
    if (fixed) {
      throw new IllegalStateException("the key of this call is fixed (it was read or sent); configure before that");
    }
  }
}
