package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import org.junit.jupiter.api.Test;

/**
 * Review (rv-cancel): a keyed POST with {@code Expect: 100-continue}. OkHttp flushes the request
 * headers (key included) before it writes a byte of the body and waits for the server's answer;
 * a server that acts on the headers (a handler that does not read the body, as Tomcat or Jetty
 * dispatch it; a zero-length body) has the whole request. If the answer then never arrives (the
 * server dies, a proxy drops the connection, the read or call timeout fires), the body was never
 * written, so FollowUps.notSent / AttemptBody.refuse call the attempt "not sent" (SAFE): with
 * maxAttempts(1) the operation ends FAILED although the server may have applied it. Expected:
 * AMBIGUOUS, so UNCERTAIN.
 *
 * <p>The server is a plain socket on an ephemeral port: it reads the request head, counts it as
 * applied, and closes the connection without answering. No timing is involved.
 */
class ExpectContinueHeadersOutNotSentTest {
  final Fixture f = new Fixture();

  @Test
  void headersFlushedForExpectContinueThenConnectionDropsIsNotNotSent() throws Exception {
    try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<String> head = CompletableFuture.supplyAsync(() -> {
        try (Socket s = ss.accept()) {
          String h = readHead(s.getInputStream());
          // The server applies the operation on the head (its handler does not need the body),
          // then the connection drops before the answer.
          return h;
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      IdempotentExecutor executor = f.executorBuilder()
          .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      OkHttpClient client = Fixture.client(idem);
      IdempotentOperation op = IdempotentOperation.of("cancel-order");
      Request request = new Request.Builder().url("http://127.0.0.1:" + ss.getLocalPort() + "/orders/42/cancel")
          .header("Expect", "100-continue")
          .post(RequestBody.create(Fixture.ORDER, Fixture.JSON))
          .tag(IdempotentOperation.class, op).build();
      assertThrows(IOException.class, () -> client.newCall(request).execute().close());

      String received = head.get(10, TimeUnit.SECONDS);
      OperationRecord r = f.record(op);
      assertEquals(true, received.toLowerCase().contains("idempotency-key"),
          "the server got the keyed request head: " + received);
      assertEquals(OperationState.UNCERTAIN, r.state(),
          "the server had the request (headers flushed for Expect: 100-continue) and may have applied it,"
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
