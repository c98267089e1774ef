package dev.idem.core.internal;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An operation's record without its identity, packed into one byte array, for the in-memory journal
 * to keep its finished operations in.
 *
 * <p>Why: a finished record is some 45 objects (snapshots, header maps and their lists and strings,
 * instants, attempts). The in-memory journal keeps tens of thousands of them by default, each for a
 * second or two at thousands of calls a second: long enough for every young collection to copy them
 * again, which cost the end-to-end benchmark's 32 callers a tenth of their rate. One array is one
 * object to copy, of about the same bytes. Finished records are rarely read again (a repeated key,
 * {@code find}, a listing), so their reads pay the unpacking.
 *
 * <p>Lossless: {@link #unpack} returns a record equal to the one packed. Pure and thread-safe.
 */
public final class PackedRecord {
  private static final OperationState[] STATES = OperationState.values();
  private static final Classification[] CLASSIFICATIONS = Classification.values();
  private static final byte NULL = 0;
  private static final byte PRESENT = 1;
  private static final HexFormat HEX = HexFormat.of();
  /** A fingerprint's 64 hex characters, kept as the 32 bytes they spell. */
  private static final int FINGERPRINT_BYTES = 32;

  private PackedRecord() {
  }

  /**
   * Packs everything of {@code r} but its identity, which the caller keeps beside the array.
   *
   * @param r the record
   * @return a new array; {@link #unpack} with {@code r.id()} makes a record equal to {@code r}
   */
  public static byte[] pack(OperationRecord r) {
    RequestSnapshot request = r.request();
    ResponseSnapshot response = r.response();
    // Sized first, so that the usual record is written into one array of its exact length: growing a
    // guess and trimming it made three arrays a call, a quarter of what the in-memory path allocated.
    Writer w = new Writer(size(r));
    w.string(r.reference());
    w.hex(r.fingerprint().hex());
    w.string(request.method());
    w.string(request.uri().toString());
    w.string(SnapshotAccess.get().contentType(request));
    w.headers(request.headers());
    w.bytes(SnapshotAccess.get().body(request));
    Duration timeout = request.timeout().orElse(null);
    w.b(timeout == null ? NULL : PRESENT);
    if (timeout != null) {
      w.l(timeout.getSeconds());
      w.i(timeout.getNano());
    }
    w.b((byte) r.state().ordinal());
    w.string(r.owner());
    w.l(r.generation());
    w.instant(r.leaseExpiresAt());
    w.instant(r.nextAttemptAt());
    w.instant(r.createdAt());
    w.instant(r.updatedAt());
    List<AttemptRecord> attempts = r.attempts();
    w.i(attempts.size());
    for (int k = 0; k < attempts.size(); k++) {
      AttemptRecord a = attempts.get(k);
      w.i(a.number());
      w.l(a.generation());
      w.instant(a.startedAt());
      w.instant(a.endedAt());
      w.b((byte) a.classification().ordinal());
      w.b(a.status() == null ? NULL : PRESENT);
      if (a.status() != null) {
        w.i(a.status());
      }
      w.string(a.exceptionClass());
      w.string(a.reason());
      w.l(a.delay().getSeconds());
      w.i(a.delay().getNano());
      w.string(a.decision());
    }
    w.b(response == null ? NULL : PRESENT);
    if (response != null) {
      w.i(response.status());
      w.headers(response.headers());
      w.bytes(SnapshotAccess.get().body(response));
    }
    w.string(r.reason());
    w.b(r.queued() ? PRESENT : NULL);
    w.instant(r.outcomeDeliveredAt());
    return w.done();
  }

  /**
   * The record {@link #pack} packed.
   *
   * @param id the record's identity
   * @param packed what {@link #pack} returned; not changed
   * @return a record equal to the one packed
   */
  /**
   * The length {@link #pack} writes for {@code r} when its strings are all ASCII, as nearly all are;
   * a string that is not makes the writer grow, and the result is trimmed. Package-private for tests.
   */
  static int size(OperationRecord r) {
    RequestSnapshot request = r.request();
    ResponseSnapshot response = r.response();
    int n = size(r.reference()) + FINGERPRINT_BYTES + size(request.method()) + size(request.uri().toString())
        + size(SnapshotAccess.get().contentType(request)) + size(request.headers()) + sizeOfBytes(request.bodyLength());
    Duration timeout = request.timeout().orElse(null);
    n += 1 + (timeout == null ? 0 : 8 + varint(timeout.getNano()));
    n += 1 + size(r.owner()) + 8 + size(r.leaseExpiresAt()) + size(r.nextAttemptAt()) + size(r.createdAt())
        + size(r.updatedAt());
    List<AttemptRecord> attempts = r.attempts();
    n += varint(attempts.size());
    for (int k = 0; k < attempts.size(); k++) {
      AttemptRecord a = attempts.get(k);
      n += varint(a.number()) + 8 + size(a.startedAt()) + size(a.endedAt()) + 1 + 1
          + (a.status() == null ? 0 : varint(a.status())) + size(a.exceptionClass()) + size(a.reason())
          + 8 + varint(a.delay().getNano()) + size(a.decision());
    }
    n += 1;
    if (response != null) {
      n += varint(response.status()) + size(response.headers()) + sizeOfBytes(response.bodyLength());
    }
    return n + size(r.reason()) + 1 + size(r.outcomeDeliveredAt());
  }

  private static int varint(int v) {
    int n = 1;
    while ((v & ~0x7f) != 0) {
      v >>>= 7;
      n++;
    }
    return n;
  }

  private static int size(String s) {
    return s == null ? 1 : varint(s.length() + 1) + s.length();
  }

  private static int sizeOfBytes(int length) {
    return varint(length) + length;
  }

  private static int size(Instant t) {
    return t == null ? 1 : 1 + 8 + varint(t.getNano());
  }

  private static int size(Map<String, List<String>> headers) {
    int[] n = {varint(headers.size())};
    headers.forEach((name, values) -> {
      n[0] += size(name) + varint(values.size());
      for (int k = 0; k < values.size(); k++) {
        n[0] += size(values.get(k));
      }
    });
    return n[0];
  }

  public static OperationRecord unpack(OperationId id, byte[] packed) {
    Reader in = new Reader(packed);
    String reference = in.string();
    Fingerprint fingerprint = new Fingerprint(HEX.formatHex(in.raw(FINGERPRINT_BYTES)));
    RequestSnapshot.Builder b = RequestSnapshot.builder(in.string(), URI.create(in.string()));
    String contentType = in.string();
    in.headers().forEach((name, values) -> values.forEach(v -> b.header(name, v)));
    b.body(in.bytes(), contentType);
    if (in.b() != NULL) {
      b.timeout(Duration.ofSeconds(in.l(), in.i()));
    }
    RequestSnapshot request = b.build();
    OperationState state = STATES[in.b()];
    String owner = in.string();
    long generation = in.l();
    Instant leaseExpiresAt = in.instant();
    Instant nextAttemptAt = in.instant();
    Instant createdAt = in.instant();
    Instant updatedAt = in.instant();
    int n = in.i();
    List<AttemptRecord> attempts = new ArrayList<>(n);
    for (int k = 0; k < n; k++) {
      int number = in.i();
      long attemptGeneration = in.l();
      Instant startedAt = in.instant();
      Instant endedAt = in.instant();
      Classification classification = CLASSIFICATIONS[in.b()];
      Integer status = in.b() == NULL ? null : in.i();
      String exceptionClass = in.string();
      String reason = in.string();
      Duration delay = Duration.ofSeconds(in.l(), in.i());
      attempts.add(new AttemptRecord(number, attemptGeneration, startedAt, endedAt, classification, status,
          exceptionClass, reason, delay, in.string()));
    }
    ResponseSnapshot response = null;
    if (in.b() != NULL) {
      int status = in.i();
      Map<String, List<String>> headers = in.headers();
      response = new ResponseSnapshot(status, headers, in.bytes());
    }
    String reason = in.string();
    boolean queued = in.b() != NULL;
    Instant outcomeDeliveredAt = in.instant();
    return new OperationRecord(id, reference, fingerprint, request, state, owner, generation, leaseExpiresAt,
        nextAttemptAt, createdAt, updatedAt, attempts, response, reason, queued, outcomeDeliveredAt);
  }

  /** Appends to an array that grows as needed; not thread-safe. */
  private static final class Writer {
    private byte[] buf;
    private int at;

    Writer(int size) {
      buf = new byte[size];
    }

    private void room(int n) {
      if (at + n > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, at + n));
      }
    }

    void b(byte v) {
      room(1);
      buf[at++] = v;
    }

    /**
     * Seven bits a byte, low first, the high bit set on every byte but the last: the lengths and
     * small numbers that make up most of a record take one byte instead of four.
     */
    void i(int v) {
      // Exact, not the most a varint takes: the array is sized to the record, and a reserve at its
      // end grew it.
      room(varint(v));
      while ((v & ~0x7f) != 0) {
        buf[at++] = (byte) (v & 0x7f | 0x80);
        v >>>= 7;
      }
      buf[at++] = (byte) v;
    }

    void l(long v) {
      room(8);
      for (int k = 56; k >= 0; k -= 8) {
        buf[at++] = (byte) (v >>> k);
      }
    }

    /**
     * 0 for null; an ASCII string as its length plus one, then a byte a character; any other as
     * minus its length, then two bytes a character (UTF-16, so that every string comes back as it
     * was, an unpaired surrogate in an exception's message included, which UTF-8 would replace).
     */
    void string(String s) {
      if (s == null) {
        i(0);
        return;
      }
      int n = s.length();
      room(varint(n + 1) + n);
      int mark = at;
      i(n + 1);
      // Nearly every string of a record is ASCII (names, reasons, header values): written as it is
      // read, without the array getBytes makes.
      for (int k = 0; k < n; k++) {
        char c = s.charAt(k);
        if (c >= 0x80) {
          at = mark;
          i(-n);
          room(2 * n);
          for (int j = 0; j < n; j++) {
            char d = s.charAt(j);
            buf[at++] = (byte) (d >>> 8);
            buf[at++] = (byte) d;
          }
          return;
        }
        buf[at++] = (byte) c;
      }
    }

    /** A fingerprint's lower-case hex characters, as the bytes they spell. */
    void hex(String hex) {
      room(hex.length() / 2);
      for (int k = 0; k < hex.length(); k += 2) {
        buf[at++] = (byte) (Character.digit(hex.charAt(k), 16) << 4 | Character.digit(hex.charAt(k + 1), 16));
      }
    }

    void bytes(byte[] v) {
      i(v.length);
      raw(v);
    }

    void raw(byte[] v) {
      room(v.length);
      System.arraycopy(v, 0, buf, at, v.length);
      at += v.length;
    }

    void instant(Instant t) {
      if (t == null) {
        b(NULL);
        return;
      }
      b(PRESENT);
      l(t.getEpochSecond());
      i(t.getNano());
    }

    void headers(Map<String, List<String>> headers) {
      i(headers.size());
      // forEach, not the entry set: the snapshots' maps are unmodifiable views, whose entry iteration
      // wraps every entry in an object of its own.
      headers.forEach((name, values) -> {
        string(name);
        i(values.size());
        for (int k = 0; k < values.size(); k++) {
          string(values.get(k));
        }
      });
    }

    byte[] done() {
      return at == buf.length ? buf : Arrays.copyOf(buf, at);
    }
  }

  /** Reads what {@link Writer} wrote, in the same order; not thread-safe. */
  private static final class Reader {
    private final byte[] buf;
    private int at;

    Reader(byte[] buf) {
      this.buf = buf;
    }

    byte b() {
      return buf[at++];
    }

    int i() {
      int v = 0;
      for (int shift = 0; ; shift += 7) {
        byte b = buf[at++];
        v |= (b & 0x7f) << shift;
        if (b >= 0) {
          return v;
        }
      }
    }

    long l() {
      long v = 0;
      for (int k = 0; k < 8; k++) {
        v = v << 8 | buf[at++] & 0xff;
      }
      return v;
    }

    String string() {
      int n = i();
      if (n == 0) {
        return null;
      }
      if (n > 0) {
        String s = new String(buf, at, n - 1, StandardCharsets.ISO_8859_1);
        at += n - 1;
        return s;
      }
      char[] chars = new char[-n];
      for (int k = 0; k < chars.length; k++) {
        chars[k] = (char) ((buf[at++] & 0xff) << 8 | buf[at++] & 0xff);
      }
      return new String(chars);
    }

    byte[] bytes() {
      return raw(i());
    }

    byte[] raw(int n) {
      byte[] v = Arrays.copyOfRange(buf, at, at + n);
      at += n;
      return v;
    }

    Instant instant() {
      return b() == NULL ? null : Instant.ofEpochSecond(l(), i());
    }

    Map<String, List<String>> headers() {
      int n = i();
      Map<String, List<String>> headers = new TreeMap<>();
      for (int k = 0; k < n; k++) {
        String name = string();
        int m = i();
        List<String> values = new ArrayList<>(m);
        for (int j = 0; j < m; j++) {
          values.add(string());
        }
        headers.put(name, values);
      }
      return headers;
    }
  }
}
