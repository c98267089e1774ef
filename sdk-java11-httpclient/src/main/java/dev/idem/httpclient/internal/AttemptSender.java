package dev.idem.httpclient.internal;

import dev.idem.core.RequestNotSentException;
import dev.idem.core.ResponseSnapshot;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.ProtocolException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Sends one attempt through the wrapped client and buffers the response, translating the JDK's
 * failures into the transport contract: a refused or timed-out connect provably sent nothing and
 * becomes {@link RequestNotSentException} (SAFE, so exhaustion ends FAILED rather than UNCERTAIN,
 * whatever classifier the app installs); an interrupt becomes {@link InterruptedIOException},
 * which the executor turns into a PENDING operation.
 */
public final class AttemptSender {
  private final HttpClient delegate;

  public AttemptSender(HttpClient delegate) {
    this.delegate = delegate;
  }

  /** One attempt and its buffered response. */
  public record Result(HttpResponse<byte[]> raw, ResponseSnapshot snapshot) {}

  /** Sends on the calling thread. */
  public Result send(HttpRequest attempt) throws IOException {
    try {
      return buffer(delegate.send(attempt, HttpResponse.BodyHandlers.ofByteArray()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      InterruptedIOException io = new InterruptedIOException("interrupted while waiting for the response");
      io.initCause(e);
      throw io;
    } catch (IOException e) {
      throw translate(e);
    }
  }

  /** Sends without blocking; the future fails with an {@link IOException}. */
  public CompletableFuture<Result> sendAsync(HttpRequest attempt) {
    CompletableFuture<Result> out = new CompletableFuture<>();
    delegate.sendAsync(attempt, HttpResponse.BodyHandlers.ofByteArray()).whenComplete((r, error) -> {
      if (error == null) {
        try {
          out.complete(buffer(r));
        } catch (IOException e) {
          out.completeExceptionally(e);
        }
        return;
      }
      Throwable cause = unwrap(error);
      out.completeExceptionally(cause instanceof IOException io ? translate(io) : cause);
    });
    return out;
  }

  private static Result buffer(HttpResponse<byte[]> r) throws IOException {
    if (r.statusCode() < 100 || r.statusCode() > 599) {
      throw new ProtocolException("HTTP status out of range: " + r.statusCode());
    }
    byte[] body = r.body() == null ? new byte[0] : r.body();
    return new Result(r, new ResponseSnapshot(r.statusCode(), r.headers().map(), body));
  }

  private static IOException translate(IOException e) {
    if (e instanceof ConnectException || e instanceof HttpConnectTimeoutException) {
      return new RequestNotSentException("could not connect (" + e.getClass().getSimpleName()
          + "); no byte of the request was sent", e);
    }
    return e;
  }

  static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
