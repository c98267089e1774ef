package dev.idem.okhttp.internal;

import dev.idem.core.ResponseSnapshot;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import okhttp3.Response;
import okio.BufferedSource;

/**
 * Reads as much of a live response as the outcome and the journal need, and never more than
 * {@link ResponseSnapshot#MAX_CAPTURED_BODY} bytes: the outcome is decided from the status and the
 * headers, so a 2xx body is read here only when its declared length fits the cap (then the journal
 * keeps it whole); an error body is read up to the cap, because the classifier looks into it (a
 * 400 naming the key). What is read stays in the body's own buffer, so the caller who gets this
 * response reads the captured prefix followed by the rest of the live source, unbuffered; a body
 * that is not kept is marked with {@link ResponseSnapshot#BODY_NOT_KEPT_HEADER}. Stateless.
 */
final class ResponseCapture {
  private ResponseCapture() {}

  /**
   * The snapshot of {@code raw}, leaving its body open and readable from the start.
   *
   * @throws IOException if the body breaks off while its prefix is read (the response is then closed)
   */
  static ResponseSnapshot capture(Response raw) throws IOException {
    try {
      long declared = raw.body().contentLength();
      boolean read = !raw.isSuccessful() || (declared >= 0 && declared <= ResponseSnapshot.MAX_CAPTURED_BODY);
      if (read) {
        BufferedSource source = raw.body().source();
        // request() fills the source's buffer without consuming it: false means the body ended within the cap.
        if (!source.request(ResponseSnapshot.MAX_CAPTURED_BODY + 1L)) {
          return new ResponseSnapshot(raw.code(), raw.headers().toMultimap(), source.getBuffer().snapshot().toByteArray());
        }
      }
      return notKept(raw, declared);
    } catch (IOException | RuntimeException | Error e) {
      raw.close();
      throw e;
    }
  }

  /** A bounded snapshot of {@code raw} for a call that nobody reads on (a resume), and closes it. */
  static ResponseSnapshot captureAndClose(Response raw) throws IOException {
    try (raw) {
      BufferedSource source = raw.body().source();
      if (!source.request(ResponseSnapshot.MAX_CAPTURED_BODY + 1L)) {
        return new ResponseSnapshot(raw.code(), raw.headers().toMultimap(), source.readByteArray());
      }
      return notKept(raw, raw.body().contentLength());
    }
  }

  private static ResponseSnapshot notKept(Response raw, long declared) {
    Map<String, List<String>> headers = new LinkedHashMap<>(raw.headers().toMultimap());
    headers.put(ResponseSnapshot.BODY_NOT_KEPT_HEADER, List.of(declared >= 0 ? Long.toString(declared) : "unknown"));
    return new ResponseSnapshot(raw.code(), headers, new byte[0]);
  }
}
