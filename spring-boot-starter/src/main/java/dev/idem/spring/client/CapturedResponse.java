package dev.idem.spring.client;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.adapter.CaptureRule;
import dev.idem.spring.internal.SpringHeaders;
import java.io.ByteArrayInputStream;
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
 *
 * <p>One per attempt; not thread-safe.
 */
final class CapturedResponse {
  private final ClientHttpResponse raw;
  private final ResponseSnapshot snapshot;
  private final byte[] prefix;
  private final boolean whole;
  private boolean handedOver;

  private CapturedResponse(ClientHttpResponse raw, ResponseSnapshot snapshot, byte[] prefix, boolean whole) {
    this.raw = raw;
    this.snapshot = snapshot;
    this.prefix = prefix;
    this.whole = whole;
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
      byte[] prefix = read ? prefix(raw) : new byte[0];
      ResponseSnapshot snapshot = CaptureRule.snapshot(status, SpringHeaders.toMap(raw.getHeaders()),
          read ? prefix : null, declared);
      return new CapturedResponse(raw, snapshot, prefix, read && prefix.length <= ResponseSnapshot.MAX_CAPTURED_BODY);
    } catch (IOException | RuntimeException | Error e) {
      raw.close();
      throw e;
    }
  }

  /** For a resumed operation, which nobody reads on: the snapshot, and the response closed. */
  static ResponseSnapshot captureAndClose(ClientHttpResponse raw) throws IOException {
    try (raw) {
      return CaptureRule.snapshot(raw.getStatusCode().value(), SpringHeaders.toMap(raw.getHeaders()), prefix(raw),
          raw.getHeaders().getContentLength());
    }
  }

  // Up to one byte over the cap: enough to tell a body that fits from one that does not.
  private static byte[] prefix(ClientHttpResponse raw) throws IOException {
    InputStream in = raw.getBody();
    return in == null ? new byte[0] : in.readNBytes(ResponseSnapshot.MAX_CAPTURED_BODY + 1);
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
          InputStream head = new ByteArrayInputStream(prefix);
          body = whole ? head : new SequenceInputStream(head, raw.getBody());
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
