package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Review (rv-notsent): a keyed request with an empty body (DELETE, BodyPublishers.noBody(),
 * ofByteArray(new byte[0])) whose TLS handshake fails. Not one byte of HTTP left the client (the
 * server saw only a ClientHello), exactly as in HeadOutBodyNotTakenTest.failedTlsHandshakeStaysNotSent,
 * which ends FAILED for a non-empty body. PullTrackingPublisher.track leaves every publisher of
 * contentLength() <= 0 untracked, although the JDK asks contentLength() of those too before it
 * composes the head, so the same provably-unsent attempt is AMBIGUOUS and the operation UNCERTAIN:
 * the app is told "may have taken effect" (and must reconcile by hand) for a request that never left.
 */
class RvNotsentEmptyBodyHandshakeTest {
  @ParameterizedTest
  @EnumSource(Mode.class)
  void emptyBodyFailedTlsHandshakeIsNotSent(Mode mode) throws Exception {
    Fixture f = new Fixture();
    try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<Integer> helloByte = CompletableFuture.supplyAsync(() -> {
        try (Socket s = ss.accept()) {
          int first = s.getInputStream().read(); // the ClientHello began
          s.getOutputStream().write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
              .getBytes(StandardCharsets.ISO_8859_1));
          s.getOutputStream().flush();
          s.shutdownOutput();
          s.getInputStream().transferTo(OutputStream.nullOutputStream());
          return first;
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      IdempotencyKey key = IdempotencyKey.generate();
      OperationCall call = f.client.operation("cancel-order").key(key)
          .policy(RetryPolicy.builder().maxAttempts(1).build());
      HttpRequest request = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + ss.getLocalPort()
          + "/orders/42/cancel")).POST(HttpRequest.BodyPublishers.noBody()).build();
      OperationException thrown;
      if (mode == Mode.SYNC) {
        thrown = assertThrows(OperationException.class, () -> call.send(request, BodyHandlers.ofString()));
      } else {
        Exception e = assertThrows(Exception.class, () -> f.await(call.sendAsync(request, BodyHandlers.ofString())));
        if (e instanceof ExecutionException ee && ee.getCause() instanceof Exception c) {
          e = c;
        }
        assertTrue(e instanceof OperationException, e.toString());
        thrown = (OperationException) e;
      }
      assertEquals(0x16, helloByte.get(10, TimeUnit.SECONDS), "a TLS handshake record, no request head");
      boolean ssl = false;
      for (Throwable t = thrown; t != null; t = t.getCause()) {
        ssl |= t instanceof SSLException;
      }
      assertTrue(ssl, "the handshake failed: " + thrown);
      OperationRecord r = f.record(thrown.operationId());
      assertEquals(1, r.attempts().size(), r.attempts().toString());
      AttemptRecord a = r.attempts().get(0);
      assertEquals(OperationState.FAILED, r.state(), "no byte of HTTP left the client, as for a non-empty body: " + r);
      assertEquals(Classification.SAFE, a.classification(), a.toString());
    }
  }
}
