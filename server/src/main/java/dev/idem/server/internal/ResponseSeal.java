package dev.idem.server.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * A checksum over a stored response, kept as the first line of its stored headers text (a line
 * {@code :sha256=<hex>}, which {@link HeaderCodec#decode} skips: no header name is empty). A replay
 * hands the stored answer to the client as the service's; a changed byte of it (status, header,
 * body) must be refused, not replayed. It covers the record's identity too, so an answer moved to
 * another key does not match. Responses stored before it existed have no such line and are read
 * as before.
 */
public final class ResponseSeal {
  private static final String PREFIX = ":sha256=";
  /** One digest per thread: looking one up for every stored or replayed response costs more than the hash. */
  private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  });

  private ResponseSeal() {}

  /**
   * @return the headers text to store: the checksum line, then {@link HeaderCodec#encode}
   */
  public static String seal(String caller, String route, String key, int status, Map<String, List<String>> headers,
      byte[] body, boolean bodyOmitted) {
    String text = HeaderCodec.encode(headers);
    return PREFIX + digest(caller, route, key, status, text, body, bodyOmitted) + "\n" + text;
  }

  /**
   * @param stored the stored headers text, or null
   * @return true if it carries no checksum (stored before it existed) or the checksum matches
   */
  public static boolean matches(String caller, String route, String key, int status, String stored, byte[] body,
      boolean bodyOmitted) {
    if (stored == null || !stored.startsWith(PREFIX)) {
      return true;
    }
    int end = stored.indexOf('\n');
    if (end < 0) {
      return false;
    }
    String expected = digest(caller, route, key, status, stored.substring(end + 1), body, bodyOmitted);
    return MessageDigest.isEqual(stored.substring(PREFIX.length(), end).getBytes(StandardCharsets.US_ASCII),
        expected.getBytes(StandardCharsets.US_ASCII));
  }

  private static String digest(String caller, String route, String key, int status, String headersText, byte[] body,
      boolean bodyOmitted) {
    MessageDigest sha = SHA256.get();
    sha.reset();
    byte[] length = new byte[4];
    for (String part : new String[] {caller, route, key, Integer.toString(status), headersText,
        Boolean.toString(bodyOmitted)}) {
      byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
      int n = bytes.length;
      length[0] = (byte) (n >>> 24);
      length[1] = (byte) (n >>> 16);
      length[2] = (byte) (n >>> 8);
      length[3] = (byte) n;
      sha.update(length); // big-endian, as ByteBuffer.putInt wrote it for the records already stored
      sha.update(bytes);
    }
    if (body != null) {
      sha.update(body);
    }
    return HexFormat.of().formatHex(sha.digest());
  }
}
