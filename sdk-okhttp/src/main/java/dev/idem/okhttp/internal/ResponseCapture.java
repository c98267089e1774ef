package dev.idem.okhttp.internal;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.spi.adapter.CaptureDeadline;
import dev.idem.core.spi.adapter.CaptureRule;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import okhttp3.Headers;
import okhttp3.Response;
import okio.Buffer;
import okio.BufferedSource;
import okio.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link CaptureRule} on an OkHttp response: what is read stays in the body's own buffer, so
 * the caller who gets this response reads the captured prefix followed by the rest of the live
 * source, unbuffered.
 *
 * <p>The status line and headers have arrived when this runs, so the attempt is answered. Reading
 * stops at the {@link CaptureDeadline} (the read timeout counts for the whole captured body, not
 * for each read); if a read is still waiting then, the deadline cuts the connection (the caller
 * then reads what arrived, then a timeout, as OkHttp's own read timeout would give), otherwise the
 * rest of the body goes on to the caller as it arrives. Stateless.
 */
final class ResponseCapture {
  private static final Logger LOG = LoggerFactory.getLogger(ResponseCapture.class);

  private ResponseCapture() {}

  /**
   * The snapshot of {@code raw}, leaving its body open and readable from the start.
   *
   * @param deadline when to stop reading the body for the journal
   */
  static ResponseSnapshot capture(Response raw, CaptureDeadline deadline) {
    try {
      long declared = raw.body().contentLength();
      byte[] whole = null;
      if (CaptureRule.readsBody(raw.code(), declared, false)) {
        BufferedSource source = raw.body().source();
        if (readWhole(source, deadline)) {
          whole = copyOf(source.getBuffer());
        }
      }
      return CaptureRule.snapshot(raw.code(), headers(raw.headers()), whole, declared);
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
      long declared = raw.body().contentLength();
      byte[] whole = null;
      if (CaptureRule.readsBody(raw.code(), declared, true)) {
        BufferedSource source = raw.body().source();
        if (readWhole(source, deadline)) {
          // The whole body is in the buffer: nothing more is read from the wire.
          whole = source.getBuffer().readByteArray();
        }
      }
      return CaptureRule.snapshot(raw.code(), headers(raw.headers()), whole, declared);
    }
  }

  /**
   * The headers in the form the snapshot keeps (by lower-case name, names differing only in case
   * keeping the received order of their values), built once: the snapshot takes this map as it
   * is, where a map of any other kind is copied into that form again. Not
   * {@link Headers#toMultimap()}, whose sorted map and mutable lists the snapshot would copy.
   */
  private static Map<String, List<String>> headers(Headers headers) {
    int n = headers.size();
    int retryAfters = 0;
    boolean allCarried = true;
    for (int i = 0; i < n; i++) {
      String name = headers.name(i);
      allCarried &= OkHttpSnapshots.isCarried(name);
      if (name.equalsIgnoreCase(RETRY_AFTER)) {
        retryAfters++;
      }
    }
    if (allCarried && retryAfters <= 1) {
      return AdapterSupport.headerLines(n, headers::name, headers::value);
    }
    return kept(headers);
  }

  private static final String RETRY_AFTER = "Retry-After";

  /**
   * The headers with each name as {@link OkHttpSnapshots#carriedName} gives it, for a response
   * OkHttp read leniently: the journal then holds only names its replay can build (a stored answer
   * that cannot be replayed fails every later call of an operation that succeeded), and a trimmed
   * name is found by the classifier and the app as the server meant it. Of several
   * {@code Retry-After} lines (a proxy's beside the server's), only the last is kept: OkHttp's
   * {@link Response#header} reads the last, so the app and its interceptors wait for that one,
   * and the core, which reads a snapshot's first value, must not wait for another (nor a
   * classifier read another, nor a replay answer another).
   */
  private static Map<String, List<String>> kept(Headers headers) {
    List<String> names = new ArrayList<>(headers.size());
    List<String> values = new ArrayList<>(headers.size());
    int lastRetryAfter = -1;
    for (int i = 0; i < headers.size(); i++) {
      String name = OkHttpSnapshots.carriedName(headers.name(i));
      if (name != null) {
        if (name.equalsIgnoreCase(RETRY_AFTER)) {
          lastRetryAfter = names.size();
        }
        names.add(name);
        values.add(headers.value(i));
      }
    }
    int unusable = headers.size() - names.size();
    if (unusable > 0) {
      // Neither the name nor the value: either may be anything the server wrote.
      LOG.debug("Left {} response header line(s) without a usable name out of the journal", unusable);
    }
    for (int i = names.size() - 1; i >= 0; i--) {
      if (i != lastRetryAfter && names.get(i).equalsIgnoreCase(RETRY_AFTER)) {
        names.remove(i);
        values.remove(i);
      }
    }
    return AdapterSupport.headerLines(names.size(), names::get, values::get);
  }

  /**
   * The buffered bytes, copied, and the buffer left as it is. Not {@code snapshot()}: that copies
   * twice, and marks the buffer's segments shared, so that they are never returned to Okio's pool
   * once the caller has read them.
   */
  private static byte[] copyOf(Buffer buffer) {
    byte[] copy = new byte[(int) buffer.size()];
    try (Buffer.UnsafeCursor cursor = buffer.readUnsafe()) {
      int at = 0;
      for (int n = cursor.seek(0); n != -1; n = cursor.next()) {
        System.arraycopy(cursor.data, cursor.start, copy, at, n);
        at += n;
      }
    }
    return copy;
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
}
