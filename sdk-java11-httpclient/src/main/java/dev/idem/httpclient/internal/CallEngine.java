package dev.idem.httpclient.internal;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationState;
import dev.idem.core.ProtocolStatuses;
import dev.idem.core.Operation;
import dev.idem.core.Outcome;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.ResponseSnapshot;
import dev.idem.httpclient.IdempotentHttpResponse;
import dev.idem.core.KeyHeaderFormat;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandler;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;

/**
 * Runs one keyed call, sync or async: capture the body once, snapshot the request, hand the
 * operation to the executor with a {@link LiveTransport}, and turn how it ended into what
 * java.net.http callers expect: a response for SUCCEEDED and for a FAILED operation that ended
 * with a server response, an {@link IOException} for everything else.
 *
 * <p>Thread-safe: all state is per call.
 */
public final class CallEngine {
  /** The response header the reference server uses to mark replays (the executor's default). */
  private static final String REPLAY_HEADER = "Idempotent-Replayed";

  private final HttpClient delegate;
  private final AttemptSender sender;
  private final IdempotentExecutor executor;
  private final String keyHeader;
  private final KeyHeaderFormat keyFormat;
  private final long maxBodyBytes;

  public CallEngine(HttpClient delegate, IdempotentExecutor executor, String keyHeader, KeyHeaderFormat keyFormat,
      long maxBodyBytes) {
    this.delegate = delegate;
    this.sender = new AttemptSender(delegate);
    this.executor = executor;
    this.keyHeader = keyHeader;
    this.keyFormat = keyFormat;
    this.maxBodyBytes = maxBodyBytes;
  }

  /** Sends one operation on the calling thread; see the decorator's Javadoc for what it throws. */
  public <T> IdempotentHttpResponse<T> send(HttpRequest request, BodyHandler<T> handler,
      Function<RequestSnapshot, Operation> operation) throws IOException, InterruptedException {
    byte[] body = awaitCapture(BodyCapture.capture(request, maxBodyBytes));
    LiveTransport transport = new LiveTransport(sender, request, body, keyHeader, keyFormat);
    Settled settled;
    try {
      settled = settled(executor.execute(operation.apply(snapshot(request, body)), transport));
    } catch (OperationFailedException e) {
      settled = settledFailure(e, transport);
    } catch (OperationPendingException e) {
      transport.releaseUnclaimed();
      // HttpClient.send reports interrupts as InterruptedException; the operation stays PENDING.
      if (Thread.interrupted()) {
        InterruptedException ie = new InterruptedException("interrupted; " + e.getMessage());
        ie.initCause(e);
        throw ie;
      }
      throw e;
    } catch (IOException | RuntimeException | Error e) {
      transport.releaseUnclaimed(); // no response is handed over: stop the last body
      throw e;
    }
    try {
      return respond(settled, handler, transport, request).get();
    } catch (ExecutionException e) {
      throw asIOException(AttemptSender.unwrap(e));
    }
  }

  /** Sends one operation without blocking; cancelling the result stops further attempts. */
  public <T> CompletableFuture<IdempotentHttpResponse<T>> sendAsync(HttpRequest request, BodyHandler<T> handler,
      Function<RequestSnapshot, Operation> operation) {
    CompletableFuture<IdempotentHttpResponse<T>> result = new CompletableFuture<>();
    BodyCapture.capture(request, maxBodyBytes).whenComplete((body, captureError) -> {
      if (captureError != null) {
        result.completeExceptionally(AttemptSender.unwrap(captureError));
        return;
      }
      if (result.isDone()) {
        return; // cancelled before begin: nothing journaled, nothing sent
      }
      LiveTransport transport = new LiveTransport(sender, request, body, keyHeader, keyFormat);
      CompletableFuture<Outcome> execution;
      try {
        execution = executor.executeAsync(operation.apply(snapshot(request, body)), transport);
      } catch (RuntimeException e) {
        result.completeExceptionally(e);
        return;
      }
      result.whenComplete((r, e) -> {
        if (result.isCancelled()) {
          execution.cancel(false);
        }
      });
      execution.whenComplete((outcome, error) -> {
        Settled settled;
        try {
          if (error == null) {
            settled = settled(outcome);
          } else if (AttemptSender.unwrap(error) instanceof OperationFailedException e) {
            settled = settledFailure(e, transport);
          } else {
            transport.releaseUnclaimed();
            result.completeExceptionally(AttemptSender.unwrap(error));
            return;
          }
        } catch (IOException | RuntimeException e) {
          transport.releaseUnclaimed();
          result.completeExceptionally(e);
          return;
        }
        respond(settled, handler, transport, request).whenComplete((response, e) -> {
          if (e != null) {
            result.completeExceptionally(AttemptSender.unwrap(e)); // a failing body handler
          } else {
            result.complete(response);
          }
        });
      });
    });
    return result;
  }

  /**
   * The snapshot of a live request: everything the caller set, secrets included (the executor
   * keeps them out of the journal), except a key header, which Idem sets itself on each attempt.
   */
  RequestSnapshot snapshot(HttpRequest request, byte[] body) {
    RequestSnapshot.Builder b = RequestSnapshot.builder(request.method(), request.uri())
        .body(body, request.headers().firstValue("Content-Type").orElse(null));
    request.headers().map().forEach((name, values) -> {
      if (!name.equalsIgnoreCase(keyHeader)) {
        values.forEach(v -> b.header(name, v));
      }
    });
    return b.build();
  }

  /**
   * True for the server's "key missing or malformed" answer, a configuration error that callers
   * must not mistake for a validation answer: what the executor's {@link ProtocolStatuses} calls
   * key missing (by default a 400 whose body speaks of idempotency), or that status with a body
   * naming the configured header.
   */
  boolean isMissingKeyError(ResponseSnapshot response) {
    ProtocolStatuses protocol = executor.protocol();
    if (protocol.isKeyMissing(response)) {
      return true;
    }
    if (response.status() != protocol.keyMissingStatus() || protocol.isKeyReused(response)
        || protocol.isInFlight(response)) {
      return false;
    }
    String body = new String(response.body(), StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
    return body.contains(keyHeader.toLowerCase(Locale.ROOT));
  }

  private record Settled(OperationId id, ResponseSnapshot response, OperationState state, boolean replayed,
      boolean fromJournal, List<AttemptRecord> attempts) {}

  private static Settled settled(Outcome out) {
    return new Settled(out.operationId(), out.response(), OperationState.SUCCEEDED, out.replayed(),
        out.fromJournal(), out.attempts());
  }

  /** A FAILED operation with a server response is an answer; anything else is rethrown. */
  private Settled settledFailure(OperationFailedException e, LiveTransport transport) throws OperationException {
    Optional<ResponseSnapshot> last = e.lastResponse();
    if (last.isEmpty() || isMissingKeyError(last.get())) {
      transport.releaseUnclaimed();
      throw e;
    }
    boolean replayed = last.get().header(REPLAY_HEADER).map(v -> v.trim().equalsIgnoreCase("true")).orElse(false);
    return new Settled(e.operationId(), last.get(), OperationState.FAILED, replayed, transport.attemptsSent() == 0,
        e.attempts());
  }

  private <T> CompletableFuture<IdempotentHttpResponse<T>> respond(Settled s, BodyHandler<T> handler,
      LiveTransport transport, HttpRequest original) {
    AttemptSender.Result sent = transport.resultFor(s.response());
    HttpHeaders headers = sent != null ? sent.raw().headers() : HttpHeaders.of(s.response().headers(), (a, b) -> true);
    HttpClient.Version version = sent != null ? sent.raw().version() : original.version().orElse(delegate.version());
    HttpRequest request = sent != null ? sent.raw().request() : original;
    BodyHandlers.Info info = new BodyHandlers.Info(s.response().status(), headers, version);
    // The response this call received streams its live body to the caller's handler; one from the
    // journal (or another caller) is fed from its stored bytes.
    if (sent == null) {
      transport.releaseUnclaimed();
    }
    CompletableFuture<T> handled = sent != null ? BodyHandlers.attach(handler, info, sent)
        : BodyHandlers.apply(handler, info, s.response().body());
    return handled.thenApply(body -> new BufferedResponse<>(
        s.response().status(), headers, body, request, sent != null ? sent.raw().uri() : original.uri(), version,
        sent != null ? sent.raw().sslSession() : Optional.empty(), s.id(), s.state(), s.replayed(), s.fromJournal(),
        s.attempts()));
  }

  private static byte[] awaitCapture(CompletableFuture<byte[]> capture) throws IOException, InterruptedException {
    try {
      return capture.get();
    } catch (ExecutionException e) {
      Throwable cause = AttemptSender.unwrap(e);
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      throw asIOException(cause);
    }
  }

  private static IOException asIOException(Throwable t) {
    if (t instanceof IOException io) {
      return io;
    }
    if (t instanceof RuntimeException re) {
      throw re;
    }
    if (t instanceof Error err) {
      throw err;
    }
    return new IOException(t);
  }

  /** Widens a future of a subtype, passing cancellation back to the source. */
  public static <T> CompletableFuture<HttpResponse<T>> widen(CompletableFuture<IdempotentHttpResponse<T>> source) {
    CompletableFuture<HttpResponse<T>> out = new CompletableFuture<>();
    source.whenComplete((r, e) -> {
      if (e != null) {
        out.completeExceptionally(AttemptSender.unwrap(e));
      } else {
        out.complete(r);
      }
    });
    out.whenComplete((r, e) -> {
      if (out.isCancelled()) {
        source.cancel(false);
      }
    });
    return out;
  }
}
