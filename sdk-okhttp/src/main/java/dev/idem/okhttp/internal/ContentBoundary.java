package dev.idem.okhttp.internal;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.MediaType;

/**
 * A multipart body's bytes, already read, with its boundary replaced by one derived from its
 * content. OkHttp's {@code MultipartBody.Builder} picks a random boundary for each body, so the same
 * upload built again for the same operation (a job that re-processes an item under
 * {@code IdempotentOperation.forReference}) would differ from the journaled bytes in the boundary
 * alone, and be refused as a key reused with another payload.
 *
 * <p>It works on the bytes the body wrote once, never on the body: a part backed by a stream can be
 * written only once, and any body whose type is {@code multipart/*} with a boundary is covered (a
 * {@code MultipartBody}, an upload-progress wrapper around one, a hand-written one). The rewrite is
 * sound by RFC 2046 §5.1.1: the boundary delimiter ({@code CRLF "--" boundary}, or
 * {@code "--" boundary} at the very start) must not occur inside any part, not even as the prefix of
 * a line, so every occurrence is a delimiter. A part whose own headers declare a
 * {@code multipart/*} type with a boundary (a {@code multipart/mixed} inside form data) gets its
 * inner boundary replaced the same way, and its {@code Content-Length} header, if it has one that
 * matches, adjusted; a nested part whose headers do not parse as such keeps its bytes.
 *
 * <p>The new boundary is {@code idem-} and the SHA-256 (in hex) of the content between the
 * delimiters, as long as the old one but at least 32 and at most 69 characters (RFC 2046 allows 70),
 * so the usual boundary keeps the body's length. A hash cannot occur in the content it is a hash of.
 * Stateless.
 */
final class ContentBoundary {
  private ContentBoundary() {}

  /** The bytes and type of a body with a content-derived boundary. */
  record Rebound(byte[] bytes, MediaType type) {}

  private static final byte[] CRLF = {'\r', '\n'};
  private static final byte[] HEADERS_END = {'\r', '\n', '\r', '\n'};
  private static final int MIN_LENGTH = 32;
  private static final int MAX_LENGTH = 69; // "idem-" and 64 hex digits
  private static final int MAX_DEPTH = 8;
  private static final Pattern BOUNDARY =
      Pattern.compile("(;\\s*boundary\\s*=\\s*)(?:\"([^\"]*)\"|([^\";\\s]*))", Pattern.CASE_INSENSITIVE);

  /**
   * {@code bytes} and {@code type} with a content-derived boundary, or null to keep them as they
   * are: the type is not {@code multipart/*} with a boundary, or the bytes hold no delimiter of it
   * (not the multipart entity the type says).
   */
  static Rebound of(byte[] bytes, MediaType type) {
    String boundary = boundaryOf(type);
    if (boundary == null) {
      return null;
    }
    Rewritten r = rewrite(bytes, boundary, 0);
    if (r == null) {
      return null;
    }
    MediaType rebound = MediaType.parse(withBoundary(type.toString(), boundary, r.boundary));
    return rebound == null ? null : new Rebound(r.bytes, rebound);
  }

  private record Rewritten(byte[] bytes, String boundary) {}

  /** The boundary of a {@code multipart/*} type, or null. */
  private static String boundaryOf(MediaType type) {
    if (type == null || !"multipart".equalsIgnoreCase(type.type())) {
      return null;
    }
    String boundary = type.parameter("boundary");
    return boundary == null || boundary.isEmpty() ? null : boundary;
  }

  private static Rewritten rewrite(byte[] bytes, String boundary, int depth) {
    byte[] dash = ("--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
    List<Integer> at = delimiters(bytes, dash);
    if (at.isEmpty()) {
      return null;
    }
    // The content between delimiters (what follows each one up to the next), nested multipart
    // parts already rebound, so the outer boundary derives from content that is itself stable.
    List<byte[]> segments = new ArrayList<>(at.size());
    for (int i = 0; i < at.size(); i++) {
      int from = at.get(i) + dash.length;
      int to = i + 1 < at.size() ? at.get(i + 1) : bytes.length;
      // A part ends before the CRLF that begins the next delimiter; the last segment (after the
      // close delimiter) is the epilogue, which has no part.
      boolean part = i + 1 < at.size();
      byte[] segment = Arrays.copyOfRange(bytes, from, to);
      segments.add(part && depth < MAX_DEPTH ? withNestedRebound(segment, depth) : segment);
    }
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
    for (byte[] segment : segments) {
      long n = segment.length;
      for (int s = 56; s >= 0; s -= 8) {
        sha.update((byte) (n >>> s));
      }
      sha.update(segment);
    }
    int length = Math.min(MAX_LENGTH, Math.max(MIN_LENGTH, boundary.length()));
    String rebound = "idem-" + HexFormat.of().formatHex(sha.digest()).substring(0, length - 5);
    byte[] newDash = ("--" + rebound).getBytes(StandardCharsets.ISO_8859_1);
    ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length + 16);
    out.write(bytes, 0, at.get(0)); // the preamble
    for (byte[] segment : segments) {
      out.writeBytes(newDash);
      out.writeBytes(segment);
    }
    return new Rewritten(out.toByteArray(), rebound);
  }

  /**
   * Every delimiter of {@code dash} ({@code "--" boundary}) in {@code bytes}: at the start, or
   * after a CRLF.
   */
  private static List<Integer> delimiters(byte[] bytes, byte[] dash) {
    List<Integer> at = new ArrayList<>();
    for (int i = indexOf(bytes, dash, 0); i >= 0; i = indexOf(bytes, dash, i + dash.length)) {
      if (i == 0 || (i >= 2 && bytes[i - 2] == '\r' && bytes[i - 1] == '\n')) {
        at.add(i);
      }
    }
    return at;
  }

  /**
   * {@code segment} (what follows a delimiter, up to the CRLF of the next one) with a nested
   * multipart part's inner boundary rebound; as it is if the part is not one, or does not parse.
   */
  private static byte[] withNestedRebound(byte[] segment, int depth) {
    // Transport padding and CRLF, then the part's headers up to an empty line, then its body.
    int headersStart = indexOf(segment, CRLF, 0);
    if (headersStart < 0 || segment.length < 2
        || segment[segment.length - 2] != '\r' || segment[segment.length - 1] != '\n') {
      return segment;
    }
    headersStart += 2;
    if (indexOf(segment, CRLF, headersStart) == headersStart) {
      return segment; // no headers at all: not a declared multipart part
    }
    int headersEnd = indexOf(segment, HEADERS_END, headersStart);
    int bodyStart = headersEnd + 4;
    int bodyEnd = segment.length - 2;
    if (headersEnd < 0 || bodyStart > bodyEnd) {
      return segment;
    }
    String[] lines = new String(segment, headersStart, headersEnd - headersStart, StandardCharsets.ISO_8859_1)
        .split("\r\n", -1);
    int typeLine = -1;
    int lengthLine = -1;
    for (int i = 0; i < lines.length; i++) {
      String name = nameOf(lines[i]);
      if ("content-type".equals(name)) {
        typeLine = i;
      } else if ("content-length".equals(name)) {
        lengthLine = i;
      }
    }
    if (typeLine < 0) {
      return segment;
    }
    String typeValue = lines[typeLine].substring(lines[typeLine].indexOf(':') + 1).trim();
    String inner = boundaryOf(MediaType.parse(typeValue));
    if (inner == null) {
      return segment;
    }
    byte[] body = Arrays.copyOfRange(segment, bodyStart, bodyEnd);
    if (lengthLine >= 0 && !lengthValue(lines[lengthLine]).equals(Integer.toString(body.length))) {
      return segment; // a length this body does not have: not the part we take it for
    }
    Rewritten r = rewrite(body, inner, depth + 1);
    if (r == null) {
      return segment;
    }
    lines[typeLine] = withBoundary(lines[typeLine], inner, r.boundary);
    if (lengthLine >= 0) {
      lines[lengthLine] = lines[lengthLine].substring(0, lines[lengthLine].indexOf(':') + 1) + " " + r.bytes.length;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(segment.length + 16);
    out.write(segment, 0, headersStart);
    out.writeBytes(String.join("\r\n", lines).getBytes(StandardCharsets.ISO_8859_1));
    out.writeBytes(HEADERS_END);
    out.writeBytes(r.bytes);
    out.writeBytes(CRLF);
    return out.toByteArray();
  }

  private static String nameOf(String line) {
    int colon = line.indexOf(':');
    return colon <= 0 ? null : line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
  }

  private static String lengthValue(String line) {
    return line.substring(line.indexOf(':') + 1).trim();
  }

  /** {@code type} (a Content-Type value or header line) with its boundary parameter {@code from} set to {@code to}. */
  private static String withBoundary(String type, String from, String to) {
    Matcher m = BOUNDARY.matcher(type);
    StringBuilder sb = new StringBuilder();
    while (m.find()) {
      boolean quoted = m.group(2) != null;
      String value = quoted ? m.group(2) : m.group(3);
      if (value.equals(from)) {
        value = to;
      }
      m.appendReplacement(sb, Matcher.quoteReplacement(m.group(1) + (quoted ? "\"" + value + "\"" : value)));
    }
    m.appendTail(sb);
    return sb.toString();
  }

  private static int indexOf(byte[] bytes, byte[] target, int from) {
    outer:
    for (int i = Math.max(0, from); i <= bytes.length - target.length; i++) {
      for (int j = 0; j < target.length; j++) {
        if (bytes[i + j] != target[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
