package dev.idem.okhttp.internal;

import dev.idem.core.OperationFailedException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.spi.adapter.Settlement;
import dev.idem.okhttp.IdempotencyResult;
import dev.idem.okhttp.IdempotentOperation;
import java.io.IOException;
import java.util.Optional;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The application interceptor: turns a tagged call into one logical operation run by the
 * executor, which journals it before the first byte and retries it with one key.
 *
 * <p>Which calls become operations, which key they use and how their ending becomes a response or
 * an exception are the adapter layer's rules ({@link AdapterSupport}), shared with the
 * java.net.http adapter. What an operation's ending throws is an
 * {@link dev.idem.core.IdempotencyException}, an IOException, which OkHttp reports to an
 * {@code enqueue} callback. A request the executor refuses before anything is journaled or sent
 * (bad input, a credential in the URI) throws its IllegalArgumentException, as the executor's own
 * API does: a caller's bug, not a failure to retry.
 *
 * <p>Stateless and thread-safe; {@code enqueue} runs it on a dispatcher thread, which then also
 * waits out the backoff. A cancel or call timeout of the call ends that wait ({@link BackOffCancel}).
 */
public final class IdempotencyInterceptor implements Interceptor {
  private final AdapterSupport support;
  private final long maxBodyBytes;

  /**
   * @param support the adapter's rules
   * @param maxBodyBytes the largest request body of a keyed call, in bytes
   */
  public IdempotencyInterceptor(AdapterSupport support, long maxBodyBytes) {
    this.support = support;
    this.maxBodyBytes = maxBodyBytes;
  }

  /** The largest request body of a keyed call, in bytes. */
  public long maxBodyBytes() {
    return maxBodyBytes;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    if (request.tag(Tags.RESUME_ATTEMPT) != null) {
      // An attempt of an operation the executor already drives (resumed, or an enqueued call's):
      // it carries its key, and goes out as one request like every other attempt.
      return FollowUps.proceed(chain, request, support);
    }
    IdempotentOperation op = request.tag(Tags.OPERATION);
    boolean untagged = op == null;
    if (untagged) {
      Optional<String> name = support.untaggedOperationName(request.method(), request.url().encodedPath());
      if (name.isEmpty()) {
        return chain.proceed(request);
      }
      op = IdempotentOperation.of(name.get());
    }
    PreparedCall call = PreparedCall.of(request, op, support, maxBodyBytes);
    if (untagged) {
      RequestSnapshot snapshot = call.operation().request();
      if (support.passesUntaggedUnjournaled(snapshot.contentType().orElse(null), snapshot.body())) {
        // A form body with a credential (an OAuth token call): out once, unjournaled, as under
        // PASS_THROUGH; the bytes read above, since a stream-backed body was consumed by the read.
        return chain.proceed(request.newBuilder().method(request.method(), call.body()).build());
      }
    }
    ChainTransport transport = new ChainTransport(chain, call, support, call.attemptTimeout(support));
    try {
      Settlement settled;
      try (BackOffCancel ignored = BackOffCancel.listen(chain.call(), support)) {
        settled = support.settle(support.executor().execute(call.operation(), transport));
      } catch (OperationFailedException e) {
        // A permanent refusal (or transient failures that ran out without any ambiguity): nothing took
        // effect, and the caller sees the server's answer as OkHttp would have delivered it.
        settled = support.settle(e);
      }
      return transport.last.responseFor(settled.response(), new IdempotencyResult(settled.operationId(), settled.state(),
          settled.replayed(), settled.fromJournal(), settled.attempts()));
    } finally {
      // Only the response handed over above keeps its body open; any other is closed, unread.
      transport.last.release();
    }
  }
}
