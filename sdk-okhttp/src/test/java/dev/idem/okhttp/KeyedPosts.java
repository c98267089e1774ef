package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.adapter.AdapterSupport;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import okhttp3.Request;
import okhttp3.RequestBody;

/**
 * The keyed order POST the "may have been sent" tests send to a raw socket server, and what such a
 * server read of it.
 */
final class KeyedPosts {
  private KeyedPosts() {}

  /** A POST of {@link Fixture#ORDER} to {@code base + "/orders"}, tagged as {@code op}. */
  static Request order(String base, IdempotentOperation op) {
    return new Request.Builder().url(base + "/orders").post(RequestBody.create(Fixture.ORDER, Fixture.JSON))
        .tag(IdempotentOperation.class, op).build();
  }

  /** Asserts the server read {@code op}'s keyed POST whole: its head with the key, and its body. */
  static void assertHadTheKeyedPost(String request, IdempotentOperation op) {
    assertTrue(request.startsWith("POST /orders "), request);
    assertTrue(request.toLowerCase(Locale.ROOT).contains(
        AdapterSupport.DEFAULT_KEY_HEADER.toLowerCase(Locale.ROOT) + ": " + op.key().value()),
        "the server had the keyed head: " + request);
    assertTrue(request.endsWith(Fixture.ORDER), "and the whole body: " + request);
  }

  /** Reads a request's head and its Content-Length body; returns both, as ISO-8859-1 text. */
  static String readRequest(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    int length = 0;
    for (String line = readLine(in); !line.isEmpty(); line = readLine(in)) {
      head.append(line).append('\n');
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring("content-length:".length()).trim());
      }
    }
    byte[] body = in.readNBytes(length);
    return head + "\n" + new String(body, StandardCharsets.ISO_8859_1);
  }

  private static String readLine(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int c = in.read(); c != -1 && c != '\n'; c = in.read()) {
      if (c != '\r') {
        line.append((char) c);
      }
    }
    return line.toString();
  }
}
