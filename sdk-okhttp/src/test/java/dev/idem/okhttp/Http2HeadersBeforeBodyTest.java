package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.adapter.AdapterSupport;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The body rule ("no byte of the body written, so the server cannot have acted: not sent") on an
 * HTTP/2 connection. OkHttp writes an HTTP/2 request's HEADERS frame, key included, into the
 * connection's shared frame writer before the body, and whatever flushes that writer (another
 * stream's frames, a PING ack, the RST_STREAM OkHttp sends for this stream once its body failed,
 * the connection's GOAWAY) puts the HEADERS on the wire; a server that dispatches its handler on
 * HEADERS can act before any body arrives. So on HTTP/2 a body that fails before its first byte
 * leaves the attempt AMBIGUOUS (UNCERTAIN with one attempt), while on HTTP/1.1, where OkHttp
 * buffers the head until the body is written, it stays not sent (FAILED) and nothing reaches the
 * server.
 *
 * <p>The body fails below Idem (a network interceptor's wrapper whose own source fails before the
 * first byte), so Idem's one-shot attempt body is never written. A relay in front of MockWebServer
 * keeps the client's bytes, so the test sees the frames on the wire, not only what the server chose
 * to record. A refused connection stays not sent on HTTP/2 too: no HEADERS can have been written.
 * Failed before the fix (both HTTP/2 cases): the attempt was recorded as not sent and the
 * operation ended FAILED.
 */
class Http2HeadersBeforeBodyTest {
  private static final int DATA = 0x0;
  private static final int HEADERS = 0x1;
  private static final int RST_STREAM = 0x3;
  private static final int PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".length();

  final Fixture f = new Fixture();
  final MockWebServer server = new MockWebServer();
  ClientBytesRelay relay;
  IdempotentOperation op;

  @AfterEach
  void close() throws IOException {
    if (relay != null) {
      relay.close();
    }
    server.close();
  }

  @ParameterizedTest(name = "through the call factory: {0}")
  @ValueSource(booleans = {false, true})
  void http2BodyFailingBeforeItsFirstByteIsAmbiguousNotNotSent(boolean callFactory) throws Exception {
    server.setProtocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE));
    OperationRecord r = sendWithFailingBody(Protocol.H2_PRIOR_KNOWLEDGE, "h2-order", callFactory);

    // OkHttp resets the stream whose body failed, from its writer thread, and that flushes the
    // connection's frame writer, with the HEADERS written before: wait for the reset to go out.
    byte[] wire = relay.clientBytesOnce(
        bytes -> frames(bytes).stream().anyMatch(fr -> fr[0] == RST_STREAM && fr[1] > 0), Duration.ofSeconds(10));
    List<int[]> frames = frames(wire);
    int reset = frames.stream().filter(fr -> fr[0] == RST_STREAM && fr[1] > 0).mapToInt(fr -> fr[1]).findFirst()
        .getAsInt();
    assertTrue(frames.stream().anyMatch(fr -> fr[0] == HEADERS && fr[1] == reset),
        "the keyed HEADERS of the stream whose body failed reached the wire: " + describe(frames));
    assertTrue(frames.stream().noneMatch(fr -> fr[0] == DATA), "no byte of the body went out: " + describe(frames));

    assertEquals(OperationState.UNCERTAIN, r.state(), "the keyed HEADERS reached the server, which may have acted"
        + " on them, yet the attempt was recorded as not sent: " + r);
    assertEquals(1, r.attempts().size(), r.toString());
    assertEquals(Classification.AMBIGUOUS, r.attempts().get(0).classification(), r.toString());
    // What the server made of the stream: its head, with the operation's key, and no body.
    RecordedRequest received = server.takeRequest(10, TimeUnit.SECONDS);
    assertNotNull(received, "the server saw no request on the stream");
    assertEquals(1, server.getRequestCount());
    assertEquals(op.key().value(), received.getHeaders().get(AdapterSupport.DEFAULT_KEY_HEADER), received.toString());
    assertEquals(0, received.getBodySize(), "no byte of the body went out: " + received);
  }

  @ParameterizedTest(name = "through the call factory: {0}")
  @ValueSource(booleans = {false, true})
  void http11BodyFailingBeforeItsFirstByteIsStillNotSent(boolean callFactory) throws Exception {
    OperationRecord r = sendWithFailingBody(Protocol.HTTP_1_1, "h1-order", callFactory);

    assertEquals(0, relay.clientBytes(Duration.ofSeconds(10)).length,
        "OkHttp buffers an HTTP/1.1 head until the body is written: nothing may reach the wire");
    assertEquals(0, server.getRequestCount());
    assertEquals(OperationState.FAILED, r.state(), r.toString());
    assertEquals(1, r.attempts().size(), r.toString());
    assertEquals(Classification.SAFE, r.attempts().get(0).classification(), r.toString());
  }

  @Test
  void http2ConnectionRefusedIsStillNotSent() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closed = s.getLocalPort();
    }
    IdempotentExecutor executor = f.executorBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    OkHttpClient client = Fixture.client(IdemOkHttp.builder(executor).build()).newBuilder()
        .protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE)).build();
    op = IdempotentOperation.of("refused-order");
    Request request = new Request.Builder().url("http://127.0.0.1:" + closed + "/orders")
        .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();
    assertThrows(IOException.class, () -> client.newCall(request).execute().close());
    OperationRecord r = f.record(op);
    assertEquals(OperationState.FAILED, r.state(), "no connection, no HEADERS: " + r);
    assertEquals(Classification.SAFE, r.attempts().get(0).classification(), r.toString());
  }

  /**
   * Sends a keyed POST whose body fails before its first byte, over {@code protocol}, once: executed
   * on the caller's thread, or enqueued through the adapter's call factory (its own OkHttp call).
   */
  private OperationRecord sendWithFailingBody(Protocol protocol, String operation, boolean callFactory)
      throws Exception {
    server.enqueue(new MockResponse.Builder().code(201).build());
    server.start();
    relay = new ClientBytesRelay(server.getSocketAddress());
    IdempotentExecutor executor = f.executorBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    OkHttpClient client = Fixture.client(idem).newBuilder()
        .protocols(protocol == Protocol.HTTP_1_1 ? List.of(Protocol.HTTP_1_1) : List.of(protocol))
        .addNetworkInterceptor(chain -> chain.proceed(chain.request().newBuilder()
            .method(chain.request().method(), failing(chain.request().body())).build()))
        .build();
    op = IdempotentOperation.of(operation);
    Request request = new Request.Builder().url("http://127.0.0.1:" + relay.port() + "/orders")
        .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();
    if (callFactory) {
      CompletableFuture<Response> done = new CompletableFuture<>();
      idem.callFactory(client).newCall(request).enqueue(new Callback() {
        @Override
        public void onFailure(Call call, IOException e) {
          done.completeExceptionally(e);
        }

        @Override
        public void onResponse(Call call, Response response) {
          response.close();
          done.complete(response);
        }
      });
      ExecutionException e = assertThrows(ExecutionException.class, () -> done.get(10, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof IOException, e.toString());
    } else {
      assertThrows(IOException.class, () -> client.newCall(request).execute().close());
    }
    if (protocol == Protocol.HTTP_1_1) {
      // Closes any pooled connection, so the relay has every byte the client sent. (HTTP/2 waits
      // for its frames instead: this closes the socket without flushing OkHttp's frame writer.)
      client.connectionPool().evictAll();
    }
    return f.record(op);
  }

  /**
   * {@code body} as an interceptor below Idem wraps it (to sign or compress it, say) whose own
   * source fails before it hands on a byte: the attempt's body is never written.
   */
  private static RequestBody failing(RequestBody body) {
    return new RequestBody() {
      @Override
      public MediaType contentType() {
        return body.contentType();
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        throw new IOException("the signing key's store failed before the body's first byte");
      }
    };
  }

  /** The HTTP/2 frames after the connection preface, each as {type, stream id}. */
  private static List<int[]> frames(byte[] wire) {
    List<int[]> frames = new ArrayList<>();
    if (wire.length < PREFACE) {
      return frames;
    }
    assertTrue(new String(wire, 0, PREFACE, StandardCharsets.ISO_8859_1).startsWith("PRI * HTTP/2.0"),
        "not an HTTP/2 prior-knowledge connection: " + Arrays.toString(wire));
    for (int at = PREFACE; at + 9 <= wire.length; ) {
      int length = (wire[at] & 0xff) << 16 | (wire[at + 1] & 0xff) << 8 | (wire[at + 2] & 0xff);
      int type = wire[at + 3] & 0xff;
      int stream = ((wire[at + 5] & 0x7f) << 24) | (wire[at + 6] & 0xff) << 16 | (wire[at + 7] & 0xff) << 8
          | (wire[at + 8] & 0xff);
      frames.add(new int[] {type, stream});
      at += 9 + length;
    }
    return frames;
  }

  private static String describe(List<int[]> frames) {
    return frames.stream().map(fr -> "type " + fr[0] + " stream " + fr[1]).toList().toString();
  }
}
