package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okio.BufferedSink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A keyed request body is held in memory and journaled, so it is bounded by
 * {@link IdemOkHttp.Builder#maxBodyBytes} (1 MiB by default, as in the other adapters): a body
 * declared larger is refused before it is read, one of unknown length (a file stream, a body that
 * never ends) as soon as one byte more than the cap was read; nothing is journaled or sent. Before:
 * the OkHttp adapter had no cap and copied the whole body into the heap.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class KeyedBodyCapTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  /** 16 MiB of zeros, with its length declared or not (-1); counts the bytes Idem pulled from it. */
  static RequestBody upload(boolean declared, AtomicLong pulled) {
    long size = 16L << 20;
    return new RequestBody() {
      @Override
      public MediaType contentType() {
        return MediaType.get("application/octet-stream");
      }

      @Override
      public long contentLength() {
        return declared ? size : -1;
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        byte[] chunk = new byte[64 * 1024];
        for (long n = 0; n < size; n += chunk.length) {
          sink.write(chunk);
          pulled.addAndGet(chunk.length);
        }
      }
    };
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aKeyedBodyOverTheCapIsRefusedWithoutBeingReadIntoTheHeap(boolean declared) throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = f.idem();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();
    AtomicLong pulled = new AtomicLong();
    IdempotentOperation op = IdempotentOperation.of("upload");
    Request request = new Request.Builder().url(server.url("/uploads").toString()).post(upload(declared, pulled))
        .tag(IdempotentOperation.class, op).build();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> client.newCall(request).execute().close());
    assertTrue(e.getMessage().contains("maxBodyBytes"), e.getMessage());
    assertTrue(pulled.get() <= (1L << 20) + 64 * 1024, "Idem read " + pulled.get() + " bytes of the body");
    if (declared) {
      assertEquals(0, pulled.get(), "a declared length over the cap is refused before reading");
    }
    assertEquals(0, server.requestCount(), "a body over the cap is refused before sending");
    assertTrue(f.journal.find(op.id()).isEmpty(), "nor journaled");
  }

  @Test
  void theCapIsTheBuildersAndABodyAtTheCapIsSent() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().build()).maxBodyBytes(Fixture.ORDER.length()).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();
    try (Response r = client.newCall(Fixture.order(server.url("/orders"), IdempotentOperation.of("create-order")))
        .execute()) {
      assertEquals(201, r.code());
    }
    assertThrows(IllegalArgumentException.class, () -> client.newCall(
        Fixture.order(server.url("/orders"), IdempotentOperation.of("create-order"), "{\"qty\":10}")).execute());
    assertEquals(1, server.requestCount());
    assertThrows(IllegalArgumentException.class,
        () -> IdemOkHttp.builder(f.executorBuilder().build()).maxBodyBytes(-1));
  }

  /**
   * The refusal is an exception apps log: it names the request as {@code RequestSnapshot.redactedUri}
   * does, without the value of a servlet's {@code ;jsessionid=} in the path (a session credential)
   * or the query. Before: the message carried the raw encoded path.
   */
  @Test
  void theRefusalNamesTheRequestWithoutAPathCredential() throws Exception {
    IdempotentServer server = serverExtension.server();
    OkHttpClient client = f.idem().install(new OkHttpClient.Builder()).build();
    IdempotentOperation op = IdempotentOperation.of("upload");
    Request request = new Request.Builder()
        .url(server.url("/uploads;jsessionid=S3SSION-SECRET").toString() + "?access_token=Q-SECRET")
        .post(upload(true, new AtomicLong())).tag(IdempotentOperation.class, op).build();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> client.newCall(request).execute().close());
    assertTrue(e.getMessage().contains("/uploads;jsessionid=redacted"), e.getMessage());
    assertFalse(e.getMessage().contains("SECRET"), e.getMessage());
    assertEquals(0, server.requestCount());
  }
}
