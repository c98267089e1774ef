package dev.idem.okhttp.internal;

import dev.idem.core.UntaggedPolicy;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.ResponseSnapshot;
import dev.idem.okhttp.IdempotencyResult;
import dev.idem.okhttp.IdempotentOperation;
import dev.idem.core.KeyHeaderFormat;
import dev.idem.okhttp.UnreplayableBodyException;
import java.io.IOException;
import java.util.Locale;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * The application interceptor: turns a tagged call into one logical operation run by the
 * executor, which journals it before the first byte and retries it with one key.
 *
 * <p>Endings: a SUCCEEDED operation returns its response; a FAILED one with a response returns
 * that response (as OkHttp would have, so Retrofit maps it to an error {@code Response}), except
 * the server's "key missing" answer (a configuration error; which status that is, the executor's
 * {@link dev.idem.core.ProtocolStatuses} says), which throws; everything else (UNCERTAIN, PENDING, key reused, FAILED
 * without a response) throws its {@link dev.idem.core.IdempotencyException}, an IOException.
 *
 * <p>Stateless and thread-safe; {@code enqueue} runs it on a dispatcher thread, which then also
 * waits out the backoff.
 */
public final class IdempotencyInterceptor implements Interceptor {
  private final AdapterSettings settings;

  public IdempotencyInterceptor(AdapterSettings settings) {
    this.settings = settings;
  }

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    if (request.tag(ResumeAttempt.class) != null) {
      return chain.proceed(request);
    }
    IdempotentOperation op = request.tag(IdempotentOperation.class);
    if (op == null) {
      if (settings.untagged() == UntaggedPolicy.PASS_THROUGH || !isPostOrPatch(request.method())) {
        return chain.proceed(request);
      }
      if (settings.untagged() == UntaggedPolicy.REJECT) {
        throw new IdempotencyException("untagged " + request.method() + " " + request.url().encodedPath()
            + " refused by UntaggedPolicy.REJECT: tag it with an IdempotentOperation; nothing was sent", null);
      }
      op = untaggedOperation(request);
    }
    RequestBody body = request.body();
    if (body != null && (body.isOneShot() || body.isDuplex())) {
      throw new UnreplayableBodyException("the request body of operation " + op.id() + " is "
          + (body.isDuplex() ? "duplex" : "one-shot (RequestBody.isOneShot())")
          + ", so it cannot be journaled and sent again; nothing was sent. Use a body that can be written"
          + " more than once, such as RequestBody.create(bytes, type)");
    }
    // Read the body once, here, before anything is sent: those bytes are journaled and sent on every
    // attempt, so the payload cannot drift between attempts.
    byte[] bytes = body == null ? null : OkHttpSnapshots.readBody(body);
    Request template = bytes == null ? request
        : request.newBuilder().method(request.method(), RequestBody.create(bytes, body.contentType())).build();
    RequestSnapshot snapshot = OkHttpSnapshots.snapshot(template, bytes, settings.headerName());
    ChainTransport transport = new ChainTransport(chain, template, settings);
    try {
      Outcome out = settings.executor().execute(op.toOperation(snapshot), transport);
      return transport.responseFor(out.response(), new IdempotencyResult(out.operationId(),
          OperationState.SUCCEEDED, out.replayed(), out.fromJournal(), out.attempts()));
    } catch (OperationFailedException e) {
      if (e.lastResponse().isEmpty()) {
        throw e;
      }
      ResponseSnapshot last = e.lastResponse().get();
      if (settings.executor().protocol().isKeyMissing(last)) {
        throw new OperationFailedException("operation " + e.operationId() + " FAILED: the server answered "
            + last.status() + " and says the idempotency key is missing or malformed. Check the key header configuration (name '"
            + settings.headerName() + "', format " + settings.format() + ") against the server's", e,
            e.operationId(), e.attempts(), last);
      }
      // A permanent refusal (or transient failures that ran out without any ambiguity): nothing took
      // effect, and the caller sees the server's answer as OkHttp would have delivered it.
      return transport.responseFor(last, new IdempotencyResult(e.operationId(), OperationState.FAILED, false,
          e.fromJournal(), e.attempts()));
    } finally {
      // Only the response handed over above keeps its body open; any other is closed, unread.
      transport.releaseUnclaimed();
    }
  }

  private IdempotentOperation untaggedOperation(Request request) throws IdempotencyException {
    IdempotentOperation op = IdempotentOperation.of("untagged " + request.method().toUpperCase(Locale.ROOT));
    String existing = request.header(settings.headerName());
    if (existing != null) {
      // The app chose a key itself; replacing it would break its own retries.
      IdempotencyKey key;
      try {
        key = KeyHeaderFormat.parse(existing);
      } catch (IllegalArgumentException e) {
        // An IOException, not a RuntimeException: on enqueue, OkHttp reports those to the callback.
        throw new IdempotencyException("the request's own " + settings.headerName() + " header is not a valid"
            + " key (" + e.getMessage() + "); nothing was sent", e);
      }
      op = op.withKey(key);
    }
    return op;
  }

  private static boolean isPostOrPatch(String method) {
    return method.equalsIgnoreCase("POST") || method.equalsIgnoreCase("PATCH");
  }

}
