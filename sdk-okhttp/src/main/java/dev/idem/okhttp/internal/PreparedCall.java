package dev.idem.okhttp.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.Operation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.okhttp.IdempotentOperation;
import dev.idem.okhttp.UnreplayableBodyException;
import java.io.IOException;
import java.net.ProtocolException;
import java.time.Duration;
import okhttp3.MediaType;
import okhttp3.Request;
import okhttp3.RequestBody;
import okio.Buffer;
import okio.BufferedSink;
import okio.ForwardingSink;
import okio.Okio;
import okio.Sink;

/**
 * An OkHttp request turned into a core operation, the same way for a live call (the interceptor)
 * and for a queued one ({@code IdemOkHttp.enqueue}): the body read once, the key chosen by the
 * adapter layer's key-header rule, the snapshot without the key header.
 *
 * @param request the app's request, as it was given (its own body left as it is: every attempt
 *     sends {@code body} instead, and copying the request only to swap the body cost a request
 *     copy per call)
 * @param body the bytes read once, as the body every attempt sends; null for a bodyless request
 * @param operation the operation to journal and run
 */
public record PreparedCall(Request request, RequestBody body, Operation operation) {
  /**
   * Prepares {@code request} as the operation {@code op}.
   *
   * @param request the app's request
   * @param op its operation (for an untagged call, one made by the untagged policy)
   * @param support the adapter's rules
   * @param maxBodyBytes the largest body accepted, in bytes
   * @return the prepared call
   * @throws UnreplayableBodyException if the body is one-shot or duplex; nothing was sent
   * @throws IllegalArgumentException if the body is larger than {@code maxBodyBytes}; nothing was
   *     journaled or sent, and reading stopped once it passed the cap
   * @throws ProtocolException if the body writes fewer or more bytes than its {@code contentLength()}
   *     declares, which OkHttp alone refuses the same way; nothing was journaled or sent
   * @throws IdempotencyException if the request's own key header breaks the key-header rule
   * @throws IOException if the body cannot be read
   */
  public static PreparedCall of(Request request, IdempotentOperation op, AdapterSupport support, long maxBodyBytes)
      throws IOException {
    RequestBody body = request.body();
    if (body != null && (body.isOneShot() || body.isDuplex())) {
      throw new UnreplayableBodyException("the request body of operation " + op + " is "
          + (body.isDuplex() ? "duplex" : "one-shot (RequestBody.isOneShot())")
          + ", so it cannot be journaled and sent again; nothing was sent. Use a body that can be written"
          + " more than once, such as RequestBody.create(bytes, type)");
    }
    if (op.keyFromReference()) {
      // Two sources for one key: the reference's derived key and the app's header. One of them is
      // a bug, and Idem cannot tell which (the same rule as a chosen key that differs).
      if (!request.headers(support.headerName()).isEmpty()) {
        throw new IdempotencyException("operation " + op + " derives its key from its reference, and the request"
            + " also carries a " + support.headerName() + " header; send one key (drop the header, or use"
            + " IdempotentOperation.of(name).withKey(key)). Nothing was sent", null);
      }
    } else {
      IdempotencyKey key = support.keyFor(request.headers(support.headerName()),
          op.hasChosenKey() ? op.key() : null);
      if (key != null && !key.equals(op.key())) {
        op = op.withKey(key);
      }
    }
    // Read the body once, here, before anything is sent: those bytes are journaled and sent on every
    // attempt, so the payload cannot drift between attempts. Once only: a part backed by a stream
    // (not marked one-shot, as most are not) has nothing left to write a second time.
    byte[] bytes = body == null ? null : readCapped(request, body, maxBodyBytes);
    MediaType type = body == null ? null : body.contentType();
    ContentBoundary.Rebound rebound = bytes == null ? null : ContentBoundary.of(bytes, type);
    if (rebound != null) {
      bytes = rebound.bytes();
      type = rebound.type();
    }
    RequestBody frozen = bytes == null ? null : RequestBody.create(bytes, type);
    RequestSnapshot snapshot = OkHttpSnapshots.snapshot(request, bytes, type, support.headerName());
    return new PreparedCall(request, frozen, op.toOperation(snapshot));
  }

  /**
   * The body's bytes, refused once they pass {@code maxBytes}: the whole body is held in memory and
   * journaled, so a file upload or a body that never ends must not be read to its end first. A
   * declared length over the cap is refused before anything is read. A body that writes other
   * than the length it declares is refused too, as OkHttp refuses it on the wire: every attempt
   * sends the bytes read here with their own length, so a body cut short or overlong would
   * otherwise reach the server as a whole request.
   */
  private static byte[] readCapped(Request request, RequestBody body, long maxBytes) throws IOException {
    long declared = body.contentLength();
    if (declared > maxBytes) {
      throw tooLarge(request, maxBytes);
    }
    Buffer buffer = new Buffer();
    // The declared length, when known, is the tighter cap (never above maxBytes): writing past it
    // stops at once, as OkHttp's own sink stops.
    CappedSink capped = new CappedSink(buffer, declared >= 0 ? declared : maxBytes);
    BufferedSink sink = Okio.buffer(capped);
    try {
      body.writeTo(sink);
      sink.flush();
    } catch (IOException | RuntimeException e) {
      refuseIfOver(capped, request, declared, maxBytes);
      throw e;
    }
    refuseIfOver(capped, request, declared, maxBytes); // the body may have swallowed the sink's refusal
    if (declared >= 0 && buffer.size() != declared) {
      throw new ProtocolException("the request body of " + target(request) + " declared " + declared
          + " bytes (contentLength()) and wrote " + buffer.size() + " (a stream cut short?); OkHttp refuses such a"
          + " request (\"expected " + declared + " bytes but received " + buffer.size() + "\"), and so does Idem."
          + " Nothing was journaled or sent");
    }
    return buffer.readByteArray();
  }

  /** Throws if the body wrote past the sink's cap: its declared length if it had one, else maxBytes. */
  private static void refuseIfOver(CappedSink capped, Request request, long declared, long maxBytes)
      throws ProtocolException {
    if (!capped.over) {
      return;
    }
    if (declared < 0) {
      throw tooLarge(request, maxBytes);
    }
    throw new ProtocolException("the request body of " + target(request) + " declared " + declared
        + " bytes (contentLength()) and wrote more (a stale length?); OkHttp refuses such a request, and so does"
        + " Idem. Nothing was journaled or sent");
  }

  /** As the java.net.http adapter words it: a caller's bug, refused before anything is journaled. */
  private static IllegalArgumentException tooLarge(Request request, long maxBytes) {
    return new IllegalArgumentException("the body of " + target(request) + " is larger than " + maxBytes
        + " bytes; Idem journals the whole payload, so it refuses bodies above maxBodyBytes. Nothing was sent");
  }

  /**
   * The request as every adapter's messages name it ({@link RequestSnapshot#redactedUri}): without
   * the query, user info or a credential-named path parameter's value, since apps log exceptions.
   */
  private static String target(Request request) {
    return request.method() + " " + RequestSnapshot.redactedUri(request.url().uri());
  }

  /** A sink that takes at most {@code max} bytes and fails the write that would pass it. */
  private static final class CappedSink extends ForwardingSink {
    private final long max;
    private long taken;
    boolean over;

    CappedSink(Sink delegate, long max) {
      super(delegate);
      this.max = max;
    }

    @Override
    public void write(Buffer source, long byteCount) throws IOException {
      if (byteCount > max - taken) {
        over = true;
        throw new IOException("request body over " + max + " bytes");
      }
      taken += byteCount;
      super.write(source, byteCount);
    }
  }

  /**
   * The policy's per-attempt timeout for this call's operation.
   *
   * @param support the adapter's rules, whose executor's policy applies if the operation has none
   * @return the timeout, or null for none
   */
  public Duration attemptTimeout(AdapterSupport support) {
    return operation.policy().orElse(support.executor().retryPolicy()).attemptTimeout().orElse(null);
  }
}
