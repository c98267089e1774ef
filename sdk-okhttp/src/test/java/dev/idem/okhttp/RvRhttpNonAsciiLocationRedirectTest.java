package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import java.io.IOException;
import java.time.Duration;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A keyed attempt answered with a redirect whose {@code Location} holds a non-ASCII character
 * (a server writing a raw UTF-8 path, {@code /bestellungen/größe}) is never answered to the caller.
 *
 * <p>{@code FollowUpGuard} holds the {@code Location} back from OkHttp's follow-up logic, and
 * {@code KeyedAttempt.restore} puts it back with {@code Response.Builder.addHeader}, which refuses
 * a non-ASCII value with an {@code IllegalArgumentException} (OkHttp read it from the wire
 * leniently, and {@code OkHttpSnapshots.toResponse} already uses {@code addUnsafeNonAscii} for this
 * reason). That exception escapes {@code FollowUps.proceed} after the request went out: the
 * executor takes it as a transport failure (ambiguous), retries the request with the same key
 * until its attempts run out and ends the operation UNCERTAIN. The docs promise the opposite: "a
 * redirect of a keyed request is never followed: the caller gets the 3xx with its Location. 307
 * and 308 ... permanent, FAILED". The server gets the request {@code maxAttempts} times instead of
 * once, the caller an {@code OperationUncertainException} instead of the 307, and every attempt's
 * response (its connection) is left unclosed. OkHttp alone returns such a 307 fine.
 *
 * <p>The same holds for the other header the guard holds back: a 503 whose {@code Retry-After} is
 * garbage with a non-ASCII character ({@code bient\u00f4t}). The docs: "Garbage ... values are ignored (the
 * backoff applies)", and a 503 is TRANSIENT, so attempts that all get it end FAILED with the 503;
 * instead each is an ambiguous transport failure and the operation ends UNCERTAIN.
 */
class RvRhttpNonAsciiLocationRedirectTest {
  private final Fixture f = new Fixture();
  private final MockWebServer server = new MockWebServer();

  @AfterEach
  void stop() throws IOException {
    server.close();
  }

  @Test
  void a307WithANonAsciiLocationIsTheAttemptsAnswerAsOkHttpAloneGivesIt() throws Exception {
    for (int i = 0; i < 4; i++) { // one for the plain client, up to three for Idem
      server.enqueue(new MockResponse.Builder().code(307)
          .addHeaderLenient("Location", "/bestellungen/gr\u00f6\u00dfe").build());
    }
    server.start();
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).deadline(Duration.ofMinutes(5)).build()).build()).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request request = new Request.Builder().url(server.url("/orders"))
        .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

    // Without Idem, on the same kind of client, the caller gets the 307 and its Location.
    OkHttpClient plain = new OkHttpClient.Builder().followRedirects(false).build();
    try (Response r = plain.newCall(request.newBuilder().tag(IdempotentOperation.class, null).build()).execute()) {
      assertEquals(307, r.code());
      assertEquals("/bestellungen/gr\u00f6\u00dfe", r.header("Location"));
    }
    int before = server.getRequestCount();

    Throwable thrown = null;
    int code = -1;
    String location = null;
    try (Response r = client.newCall(request).execute()) {
      code = r.code();
      location = r.header("Location");
    } catch (IOException | RuntimeException e) {
      thrown = e;
    }
    OperationRecord record = f.record(op);
    String what = "call threw " + thrown + "; journal: " + record;
    assertEquals(1, server.getRequestCount() - before, "one request on the wire for a 307 (permanent); " + what);
    assertEquals(307, code, what);
    assertEquals("/bestellungen/gr\u00f6\u00dfe", location, what);
    assertEquals(OperationState.FAILED, record.state(), what);
  }

  @Test
  void a503WithNonAsciiGarbageRetryAfterIsTransientAndEndsFailedWithThe503() throws Exception {
    for (int i = 0; i < 3; i++) {
      server.enqueue(new MockResponse.Builder().code(503).addHeaderLenient("Retry-After", "bient\u00f4t").build());
    }
    server.start();
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder()
        .retryPolicy(RetryPolicy.builder().maxAttempts(3).deadline(Duration.ofMinutes(5)).build()).build()).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request request = new Request.Builder().url(server.url("/orders"))
        .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

    Throwable thrown = null;
    int code = -1;
    try (Response r = client.newCall(request).execute()) {
      code = r.code();
    } catch (IOException | RuntimeException e) {
      thrown = e;
    }
    OperationRecord record = f.record(op);
    String what = "call threw " + thrown + "; journal: " + record;
    assertEquals(OperationState.FAILED, record.state(), "three transient 503s end FAILED, not UNCERTAIN; " + what);
    assertEquals(503, code, what);
  }
}
