package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okio.BufferedSink;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A {@link RequestBody} whose {@code contentLength()} differs from what its {@code writeTo} writes:
 * 100 declared and 18 written (an upload cut short), or 5 declared and 18 written (a stale length).
 * OkHttp alone fails such a request with a ProtocolException ("expected 100 bytes but received
 * 18"), and the server never gets a whole request. Idem reads the body into bytes and sends a
 * fresh body of those bytes, with their own length: the truncated or overlong payload is journaled
 * and sent as complete, and the server creates an effect from it.
 */
class ReviewDeclaredLengthMismatchTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  static final byte[] WRITTEN = "{\"amount\": 100, \"n".getBytes(StandardCharsets.UTF_8);

  /** Writes {@link #WRITTEN}, 18 bytes, and declares {@code declared}; replayable. */
  static RequestBody declaring(long declared) {
    return new RequestBody() {
      @Override
      public MediaType contentType() {
        return Fixture.JSON;
      }

      @Override
      public long contentLength() {
        return declared;
      }

      @Override
      public void writeTo(BufferedSink sink) throws IOException {
        sink.write(WRITTEN);
      }
    };
  }

  private Request post(long declared) {
    return new Request.Builder().url(serverExtension.server().url("/orders").toString()).post(declaring(declared))
        .build();
  }

  @ParameterizedTest
  @ValueSource(longs = {100, 5})
  void okHttpAloneRefusesABodyOtherThanItsDeclaredLength(long declared) {
    IdempotentServer server = serverExtension.server();
    OkHttpClient plain = new OkHttpClient.Builder().retryOnConnectionFailure(false).build();
    assertThrows(IOException.class, () -> plain.newCall(post(declared)).execute().close(), "the baseline");
    assertEquals(0, server.totalEffects(), "the baseline: no effect from a request whose length was wrong");
  }

  @ParameterizedTest
  @ValueSource(longs = {100, 5})
  void aKeyedCallWithABodyOtherThanItsDeclaredLengthIsRefusedBeforeTheJournal(long declared) throws Exception {
    IdempotentServer server = serverExtension.server();
    OkHttpClient client = Fixture.client(f.idem());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request request = post(declared).newBuilder().tag(IdempotentOperation.class, op).build();
    IOException e = assertThrows(IOException.class, () -> client.newCall(request).execute().close(),
        () -> "a body that declared " + declared + " bytes and wrote 18 was sent; effects at the server: "
            + server.totalEffects() + ", journaled: " + journaled(op.id()));
    assertTrue(e.getMessage().contains("declared " + declared), e.getMessage());
    assertEquals(0, server.requestCount(), "nothing sent");
    assertTrue(f.journal.find(op.id()).isEmpty(), "nothing journaled");
  }

  @ParameterizedTest
  @ValueSource(longs = {100, 5})
  void anEnqueuedBodyOtherThanItsDeclaredLengthIsNotJournaled(long declared) throws Exception {
    IdemOkHttp idem = f.idem();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request request = post(declared).newBuilder().tag(IdempotentOperation.class, op).build();
    assertThrows(IOException.class, () -> idem.enqueue(request), () -> "journaled: " + journaled(op.id()));
    assertTrue(f.journal.find(op.id()).isEmpty(), "nothing journaled for the outbox to deliver");
  }

  private String journaled(OperationId id) {
    try {
      return f.journal.find(id).map(r -> r.state() + " with " + r.request().bodyLength() + " body bytes")
          .orElse("nothing");
    } catch (IOException e) {
      return "unknown (" + e + ")";
    }
  }
}
