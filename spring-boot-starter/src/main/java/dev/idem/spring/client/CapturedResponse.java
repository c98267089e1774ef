package dev.idem.spring.client;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.adapter.CaptureRule;
import dev.idem.spring.internal.SpringHeaders;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.ProtocolException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpResponse;

/**
 * One attempt's live response with as much of its body read as the outcome and the journal need,
 * never more than {@link ResponseSnapshot#MAX_CAPTURED_BODY} bytes (the rule of every adapter): an
 * error body is read up to the cap, because the classifier looks into it; a 2xx body only when
 * its declared length fits. The caller who gets the response reads the captured prefix, then the
 * rest of the live stream. A body not kept is marked with {@link ResponseSnapshot#BODY_NOT_KEPT_HEADER}.
 * A body that breaks off while it is read leaves the attempt answered (its status decides), with
 * no body kept; the caller reads what arrived, then an {@link IOException} caused by the break.
 *
 * <p>One per attempt; not thread-safe.
 */
final class CapturedResponse {
  private final ClientHttpResponse raw;
  private final ResponseSnapshot snapshot;
  /** What was read of the body, or null if nothing was. */
  private final Prefix prefix;
  private boolean handedOver;

  private CapturedResponse(ClientHttpResponse raw, ResponseSnapshot snapshot, Prefix prefix) {
    this.raw = raw;
    this.snapshot = snapshot;
    this.prefix = prefix;
  }

  /**
   * What was read of a body: the bytes that arrived, and {@code brokeOff}, the error that ended
   * the read early, or null if it ended at the body's end or one byte past the cap.
   */
  private record Prefix(byte[] bytes, IOException brokeOff) {
    /** The body, if all of it arrived and fits the cap; else null (not kept). */
    byte[] whole() {
      return brokeOff == null && bytes.length <= ResponseSnapshot.MAX_CAPTURED_BODY ? bytes : null;
    }
  }

  /** Reads {@code raw}'s status, headers and bounded body prefix; closes it if that fails. */
  static CapturedResponse capture(ClientHttpResponse raw) throws IOException {
    try {
      int status = raw.getStatusCode().value();
      if (status < 100 || status > 599) {
        throw new ProtocolException("HTTP status out of range: " + status);
      }
      long declared = raw.getHeaders().getContentLength();
      boolean read = CaptureRule.readsBody(status, declared, false);
      Prefix prefix = read ? prefix(raw) : null;
      ResponseSnapshot snapshot = CaptureRule.snapshot(status, SpringHeaders.toMap(raw.getHeaders()),
          prefix != null ? prefix.whole() : null, declared);
      return new CapturedResponse(raw, snapshot, prefix);
    } catch (IOException | RuntimeException | Error e) {
      raw.close();
      throw e;
    }
  }

  /** For a resumed operation, which nobody reads on: the snapshot, and the response closed. */
  static ResponseSnapshot captureAndClose(ClientHttpResponse raw) throws IOException {
    try (raw) {
      return CaptureRule.snapshot(raw.getStatusCode().value(), SpringHeaders.toMap(raw.getHeaders()),
          prefix(raw).whole(), raw.getHeaders().getContentLength());
    }
  }

  /**
   * Up to one byte over the cap: enough to tell a body that fits from one that does not. The
   * status and headers arrived before this runs, so the attempt is answered whatever the body
   * does: a read that breaks off keeps what arrived and its error (the CaptureRule, as OkHttp's
   * capture), and never fails the attempt.
   */
  private static Prefix prefix(ClientHttpResponse raw) {
    int limit = ResponseSnapshot.MAX_CAPTURED_BODY + 1;
    // Grown as bytes arrive, as readNBytes does, which loses them when a read fails.
    ByteArrayOutputStream received = new ByteArrayOutputStream();
    try {
      InputStream in = raw.getBody();
      byte[] chunk = new byte[8192];
      for (int n; in != null && received.size() < limit
          && (n = in.read(chunk, 0, Math.min(chunk.length, limit - received.size()))) != -1; ) {
        received.write(chunk, 0, n);
      }
      return new Prefix(received.toByteArray(), null);
    } catch (IOException e) {
      return new Prefix(received.toByteArray(), e);
    }
  }

  /** What was read, then the rest of the stream, or the error that broke it off. */
  private InputStream liveBody() throws IOException {
    if (prefix == null) {
      return raw.getBody();
    }
    InputStream head = new ByteArrayInputStream(prefix.bytes());
    IOException brokeOff = prefix.brokeOff();
    if (brokeOff != null) {
      // Not the raw stream again: its state after the failed read is the connector's own.
      return new SequenceInputStream(head, new InputStream() {
        @Override
        public int read() throws IOException {
          throw new IOException("the response body broke off after " + prefix.bytes().length + " bytes", brokeOff);
        }
      });
    }
    return prefix.whole() != null ? head : new SequenceInputStream(head, raw.getBody());
  }

  ResponseSnapshot snapshot() {
    return snapshot;
  }

  /** Closes the live response unless it was handed over. Idempotent. */
  void release() {
    if (!handedOver) {
      handedOver = true;
      raw.close();
    }
  }

  /** The live response for the caller: the captured prefix, then the rest of the stream. */
  ClientHttpResponse handOver() {
    handedOver = true;
    return new ClientHttpResponse() {
      private InputStream body;

      @Override
      public HttpStatusCode getStatusCode() throws IOException {
        return raw.getStatusCode();
      }

      @Override
      public String getStatusText() throws IOException {
        return raw.getStatusText();
      }

      @Override
      public HttpHeaders getHeaders() {
        return raw.getHeaders();
      }

      @Override
      public InputStream getBody() throws IOException {
        if (body == null) {
          body = liveBody();
        }
        return body;
      }

      @Override
      public void close() {
        raw.close();
      }
    };
  }
}
