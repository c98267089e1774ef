package dev.idem.okhttp.internal;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.adapter.CaptureDeadline;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import okhttp3.Response;
import okio.BufferedSource;
import okio.Timeout;

/**
 * Reads as much of a live response as the outcome and the journal need, and never more than
 * {@link ResponseSnapshot#MAX_CAPTURED_BODY} bytes: the outcome is decided from the status and the
 * headers, so a 2xx body is read here only when its declared length fits the cap (then the journal
 * keeps it whole); an error body is read up to the cap, because the classifier looks into it (a
 * 400 naming the key). What is read stays in the body's own buffer, so the caller who gets this
 * response reads the captured prefix followed by the rest of the live source, unbuffered; a body
 * that is not kept is marked with {@link ResponseSnapshot#BODY_NOT_KEPT_HEADER}.
 *
 * <p>The status line and headers have arrived when this runs, so the attempt is answered: a body
 * that does not arrive whole by the {@link CaptureDeadline} (the read timeout counts for the whole
 * captured body, not for each read) or that breaks off is not kept, and never turns the attempt
 * into an unanswered one. Reading stops at the deadline; if a read is still waiting then, the
 * deadline cuts the connection (the caller then reads what arrived, then a timeout, as OkHttp's own
 * read timeout would give), otherwise the rest of the body goes on to the caller as it arrives.
 * Stateless.
 */
final class ResponseCapture {
  private ResponseCapture() {}

  /**
   * The snapshot of {@code raw}, leaving its body open and readable from the start.
   *
   * @param deadline when to stop reading the body for the journal
   */
  static ResponseSnapshot capture(Response raw, CaptureDeadline deadline) {
    try {
      long declared = raw.body().contentLength();
      boolean read = !raw.isSuccessful() || (declared >= 0 && declared <= ResponseSnapshot.MAX_CAPTURED_BODY);
      if (read) {
        BufferedSource source = raw.body().source();
        if (readWhole(source, deadline)) {
          return new ResponseSnapshot(raw.code(), raw.headers().toMultimap(), source.getBuffer().snapshot().toByteArray());
        }
      }
      return notKept(raw, declared);
    } catch (RuntimeException | Error e) {
      raw.close();
      throw e;
    }
  }

  /**
   * A bounded snapshot of {@code raw} for a call that nobody reads on (a resume), and closes it.
   *
   * @param deadline when to stop reading the body for the journal
   */
  static ResponseSnapshot captureAndClose(Response raw, CaptureDeadline deadline) {
    try (raw) {
      BufferedSource source = raw.body().source();
      if (readWhole(source, deadline)) {
        // The whole body is in the buffer: nothing more is read from the wire.
        return new ResponseSnapshot(raw.code(), raw.headers().toMultimap(), source.getBuffer().readByteArray());
      }
      return notKept(raw, raw.body().contentLength());
    }
  }

  /**
   * Buffers the body without consuming it, until it ends within the cap (true), or it proves
   * longer, the deadline passes, or it breaks off (false; the attempt is answered all the same).
   */
  private static boolean readWhole(BufferedSource source, CaptureDeadline deadline) {
    Timeout timeout = source.timeout();
    boolean hadDeadline = timeout.hasDeadline();
    long previous = hadDeadline ? timeout.deadlineNanoTime() : 0;
    if (deadline.bounded() && (!hadDeadline || deadline.nanoTime() - previous < 0)) {
      // Cuts a read still waiting at the deadline; a per-read timeout alone lets a trickle go on.
      timeout.deadlineNanoTime(deadline.nanoTime());
    }
    try {
      while (source.getBuffer().size() <= ResponseSnapshot.MAX_CAPTURED_BODY) {
        if (deadline.passed(System.nanoTime())) {
          return false;
        }
        // request() reads at least one more byte into the buffer, or says the body ended.
        if (!source.request(source.getBuffer().size() + 1)) {
          return true;
        }
      }
      return false;
    } catch (IOException e) {
      // A read timeout, the deadline, an interrupt from the attempt timer, a reset: the caller
      // meets it again when reading on, and the journal keeps no body.
      return false;
    } finally {
      // The connection may serve other calls: only this capture had the deadline.
      if (hadDeadline) {
        timeout.deadlineNanoTime(previous);
      } else {
        timeout.clearDeadline();
      }
    }
  }

  private static ResponseSnapshot notKept(Response raw, long declared) {
    Map<String, List<String>> headers = new LinkedHashMap<>(raw.headers().toMultimap());
    headers.put(ResponseSnapshot.BODY_NOT_KEPT_HEADER, List.of(declared >= 0 ? Long.toString(declared) : "unknown"));
    return new ResponseSnapshot(raw.code(), headers, new byte[0]);
  }
}
