package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.adapter.AdapterSupport;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.tls.HandshakeCertificates;

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

  /**
   * A server on {@code listener} that reads one request, head and body, and drops the connection
   * without an answer (it has the keyed order and may have acted on it); what it read. Closes
   * {@code listener} after its one connection.
   */
  static CompletableFuture<String> readsOneRequestThenDrops(ServerSocket listener) {
    return CompletableFuture.supplyAsync(() -> {
      try (listener; Socket s = listener.accept()) {
        return readRequest(s.getInputStream());
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });
  }

  /**
   * A mutual-TLS server on {@code listener} that requires a client certificate {@code certs} does
   * not trust: "refused" once its TLS refused the handshake. The TCP connection under the refused
   * TLS stays open until the client gives up (the client's encrypted head is read as bytes and
   * dropped, never decrypted), so that the client's write never races a close. Closes
   * {@code listener} after its one connection.
   */
  static CompletableFuture<String> mutualTlsRefusing(ServerSocket listener, HandshakeCertificates certs) {
    return CompletableFuture.supplyAsync(() -> {
      try (listener; Socket plain = listener.accept()) {
        SSLSocket tls = (SSLSocket) certs.sslContext().getSocketFactory()
            .createSocket(plain, null, plain.getPort(), false);
        tls.setUseClientMode(false);
        tls.setNeedClientAuth(true);
        try {
          tls.startHandshake();
          return "handshake completed, the application read " + tls.getInputStream().read();
        } catch (SSLHandshakeException e) {
          plain.getInputStream().transferTo(OutputStream.nullOutputStream());
          return "refused";
        }
      } catch (IOException e) {
        return e.toString();
      }
    });
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
