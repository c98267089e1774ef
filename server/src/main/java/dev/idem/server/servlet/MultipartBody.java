package dev.idem.server.servlet;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.Part;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.Locale;

/**
 * A {@code multipart/*} request body as the guard deals with it: the container parses it (within
 * the servlet's multipart limits) and keeps its parts for the handler, which reads them with
 * {@code getParts()} (Spring's {@code MultipartFile}); the guard cannot read the stream itself, or
 * the container would find no parts. The guard fingerprints the parts instead, by a digest of each
 * one's name, submitted file name, content type and content, in request order.
 */
final class MultipartBody {
  /** Marks a multipart digest, apart from a form's ({@link FormBody#digest}). */
  private static final byte MARK = 1;

  private MultipartBody() {}

  /** Whether a Content-Type is a multipart one, which the container parses into parts. */
  static boolean isMultipart(String contentType) {
    return contentType != null && contentType.strip().toLowerCase(Locale.ROOT).startsWith("multipart/");
  }

  /**
   * The parts' fingerprint: a mark byte and the SHA-256 over the parts; or, when their content
   * sums to {@code limit} bytes or more, {@code limit} bytes, which the guard refuses as too large
   * (413), as it does a body that long. Null when the container has no multipart configuration for
   * this request ({@code getParts()} throws {@link IllegalStateException}): the guard then reads
   * the body as any other, and the handler finds no parts, as before.
   *
   * @throws UnreadableFormException if the container cannot parse the body into parts
   */
  static byte[] fingerprint(HttpServletRequest request, int limit) throws IOException {
    Collection<Part> parts;
    try {
      parts = request.getParts();
    } catch (IllegalStateException noConfig) {
      // Also a part over the servlet's maxFileSize (Tomcat, Jetty): then the stream is gone too,
      // and the empty body the guard reads is refused no less than the container would.
      return null;
    } catch (ServletException malformed) {
      if (causedBy(malformed, IllegalStateException.class)) {
        // Jetty 12.1 wraps its "no multipart config" (and a part over the limits) in a ServletException.
        return null;
      }
      throw new UnreadableFormException("The multipart body could not be parsed: " + malformed.getMessage()
          + ". Nothing was processed.");
    }
    long total = 0;
    for (Part part : parts) {
      total += Math.max(0, part.getSize());
    }
    if (total >= limit) {
      return new byte[limit];
    }
    MessageDigest sha = sha256();
    byte[] buffer = new byte[8192];
    for (Part part : parts) {
      field(sha, part.getName());
      field(sha, part.getSubmittedFileName());
      field(sha, part.getContentType());
      sha.update(ByteBuffer.allocate(Long.BYTES).putLong(part.getSize()).array());
      try (InputStream in = new DigestInputStream(part.getInputStream(), sha)) {
        while (in.read(buffer) >= 0) {
          // the digest takes what is read
        }
      }
    }
    byte[] digest = sha.digest();
    byte[] out = new byte[Math.min(digest.length + 1, limit - 1)];
    if (out.length > 0) {
      out[0] = MARK;
      System.arraycopy(digest, 0, out, 1, out.length - 1);
    }
    return out;
  }

  private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
    for (Throwable c = t.getCause(); c != null && c != t; t = c, c = c.getCause()) {
      if (type.isInstance(c)) {
        return true;
      }
    }
    return false;
  }

  /** A string or its absence, length-prefixed, so that no two sequences of them run together. */
  private static void field(MessageDigest sha, String value) {
    if (value == null) {
      sha.update(ByteBuffer.allocate(Integer.BYTES).putInt(-1).array());
      return;
    }
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    sha.update(ByteBuffer.allocate(Integer.BYTES).putInt(bytes.length).array());
    sha.update(bytes);
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
