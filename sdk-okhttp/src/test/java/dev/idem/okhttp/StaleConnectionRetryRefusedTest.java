package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.adapter.AdapterSupport;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;

/**
 * A keyed request whose head went out on a reused connection that turned out closed, the server
 * down right after it read it (a crash, a restart, a load balancer draining). The java.net.http
 * client sends a GET or HEAD again by itself on a new connection, and its refused connect was all
 * Idem saw, read as "not sent" (RvNotsentStaleConnectionRetryTest, review rv-notsent; fixed in
 * AttemptSender). OkHttp 5.5.1 does not retry a keyed request there, a bodyless one included (with
 * its default {@code retryOnConnectionFailure}): the failure that reaches Idem is the read's end of
 * stream, AMBIGUOUS. This pins that: an OkHttp that retried would hand Idem the retry's
 * ConnectException, which Idem's table reads as not sent, and this test would fail on FAILED.
 */
class StaleConnectionRetryRefusedTest {
  final Fixture f = new Fixture();

  @Test
  void aKeyedDeleteWhoseHeadWentOutOnAStaleConnectionThenRefusedIsUncertain() throws Exception {
    ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    String base = "http://127.0.0.1:" + listener.getLocalPort();
    CompletableFuture<String> secondHead = CompletableFuture.supplyAsync(() -> {
      try (Socket s = listener.accept()) {
        BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
        readHead(in);
        OutputStream out = s.getOutputStream();
        out.write("HTTP/1.1 204 No Content\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        // The pooled connection carries the keyed DELETE: the server has it, then goes down before
        // answering, listener first, so that OkHttp's retry on a new connection is refused.
        String head = readHead(in);
        listener.close();
        return head;
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    });
    IdempotentExecutor executor = f.executorBuilder().retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    // OkHttp's default: retry on connection failure (the fixture's client turns it off).
    OkHttpClient client = new OkHttpClient.Builder().addInterceptor(idem.interceptor()).build();

    try (Response warm = client.newCall(new Request.Builder().url(base + "/warm").get().build()).execute()) {
      assertEquals(204, warm.code());
    }
    IdempotentOperation op = IdempotentOperation.of("cancel-subscription");
    Request delete = new Request.Builder().url(base + "/subscriptions/42").delete()
        .tag(IdempotentOperation.class, op).build();
    assertThrows(IOException.class, () -> client.newCall(delete).execute().close());

    String head = secondHead.get(10, TimeUnit.SECONDS);
    assertTrue(head.startsWith("DELETE /subscriptions/42"), head);
    assertTrue(head.toLowerCase().contains(AdapterSupport.DEFAULT_KEY_HEADER.toLowerCase() + ": " + op.key().value()),
        "the server had the keyed head: " + head);
    OperationRecord r = f.record(op);
    assertEquals(OperationState.UNCERTAIN, r.state(), "the server had the keyed request, yet: " + r);
    assertEquals(1, r.attempts().size(), r.toString());
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), r.toString());
  }

  /** Reads a request head up to its blank line; returns it. */
  private static String readHead(BufferedReader in) throws IOException {
    StringBuilder head = new StringBuilder();
    for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
      head.append(line).append('\n');
    }
    return head.toString();
  }
}
