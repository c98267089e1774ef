package dev.idem.spring.client;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.spring.internal.SpringHeaders;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.ProtocolException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
      Map<String, List<String>> headers = SpringHeaders.toMap(raw.getHeaders());
      long declared = raw.getHeaders().getContentLength();
      boolean read = status / 100 != 2 || (declared >= 0 && declared <= ResponseSnapshot.MAX_CAPTURED_BODY);
      if (read) {
        InputStream in = raw.getBody();
        byte[] prefix = in == null ? new byte[0] : in.readNBytes(ResponseSnapshot.MAX_CAPTURED_BODY + 1);
        if (prefix.length <= ResponseSnapshot.MAX_CAPTURED_BODY) {
          return new CapturedResponse(raw, new ResponseSnapshot(status, headers, prefix), prefix, true);
        }
        return new CapturedResponse(raw, notKept(status, headers, declared), prefix, false);
      }
      return new CapturedResponse(raw, notKept(status, headers, declared), new byte[0], false);
    } catch (IOException | RuntimeException | Error e) {
      raw.close();
      throw e;
    }
  }

  /** For a resumed operation, which nobody reads on: the snapshot, and the response closed. */
  static ResponseSnapshot captureAndClose(ClientHttpResponse raw) throws IOException {
    try (raw) {
      int status = raw.getStatusCode().value();
      Map<String, List<String>> headers = SpringHeaders.toMap(raw.getHeaders());
      InputStream in = raw.getBody();
      byte[] prefix = in == null ? new byte[0] : in.readNBytes(ResponseSnapshot.MAX_CAPTURED_BODY + 1);
      if (prefix.length <= ResponseSnapshot.MAX_CAPTURED_BODY) {
        return new ResponseSnapshot(status, headers, prefix);
      }
      return notKept(status, headers, raw.getHeaders().getContentLength());
    }
  }

  private static ResponseSnapshot notKept(int status, Map<String, List<String>> headers, long declared) {
    Map<String, List<String>> marked = new LinkedHashMap<>(headers);
    marked.put(ResponseSnapshot.BODY_NOT_KEPT_HEADER, List.of(declared >= 0 ? Long.toString(declared) : "unknown"));
    return new ResponseSnapshot(status, marked, new byte[0]);
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
