package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Review (rv-cancel): a live call whose request has {@code expectContinue(true)} (kept for the
 * attempt by AttemptRequests.Settings). The JDK sends the request head, key included, and waits
 * for the server before it takes a byte of the body; a server that acts on the head (a handler
 * that does not read the body) has the request. If the answer never comes (the server dies, a
 * proxy drops the connection, the request timeout fires), the body was never pulled, so
 * AttemptSender.classify / PullTrackingPublisher.refuse call the attempt "not sent" (SAFE): with
 * maxAttempts(1) the operation ends FAILED though the server may have applied it. Expected:
 * AMBIGUOUS, so UNCERTAIN.
 *
 * <p>The server is a plain socket on an ephemeral port: it reads the request head and closes the
 * connection without answering. No timing is involved.
 */
class ExpectContinueHeadersOutNotSentTest {
  @ParameterizedTest
  @EnumSource(Mode.class)
  void headersSentForExpectContinueThenConnectionDropsIsNotNotSent(Mode mode) throws Exception {
    Fixture f = new Fixture();
    try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<String> head = CompletableFuture.supplyAsync(() -> {
        try (Socket s = ss.accept()) {
          return readHead(s.getInputStream()); // applied on the head; the connection then drops
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      IdempotencyKey key = IdempotencyKey.generate();
      OperationCall call = f.client.operation("cancel-order").key(key)
          .policy(RetryPolicy.builder().maxAttempts(1).build());
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ss.getLocalPort()
              + "/orders/42/cancel"))
          .header("Content-Type", "application/json")
          .expectContinue(true)
          .POST(HttpRequest.BodyPublishers.ofString("{\"qty\":1}"))
          .build();
      OperationException thrown = f.failure(mode, call, request);
      String received = head.get(10, TimeUnit.SECONDS);
      assertTrue(received.toLowerCase(Locale.ROOT).contains(key.value().toLowerCase(Locale.ROOT)),
          "the server got the keyed request head: " + received);
      OperationRecord r = f.record(thrown.operationId());
      assertEquals(OperationState.UNCERTAIN, r.state(),
          "the server had the request head (sent for Expect: 100-continue) and may have applied it,"
              + " yet the attempt was recorded as not sent: " + r);
    }
  }

  static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) != -1) {
      out.write(c);
      byte[] b = out.toByteArray();
      int n = b.length;
      if (n >= 4 && b[n - 4] == '\r' && b[n - 3] == '\n' && b[n - 2] == '\r' && b[n - 1] == '\n') {
        break;
      }
    }
    return out.toString(StandardCharsets.ISO_8859_1);
  }
}
