package dev.idem.okhttp.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.spi.adapter.AdapterSupport;
import java.io.IOException;
import okhttp3.Call;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okio.Buffer;
import org.junit.jupiter.api.Test;

/**
 * {@link ExpectContinueWatch} on the request OkHttp wrote the head of: a keyed attempt's body
 * becomes head-first when the header is there (so no failure calls the attempt not sent), and an
 * attempt already recorded as not sent gets its call cancelled before the head is flushed. The
 * calls are never executed.
 */
class ExpectContinueWatchTest {
  final OkHttpClient client = new OkHttpClient();
  final AdapterSupport support = AdapterSupport.of(IdempotentExecutor.builder().journal(new InMemoryJournal()).build(),
      AdapterSupport.DEFAULT_KEY_HEADER, KeyHeaderFormat.BARE, UntaggedPolicy.PASS_THROUGH);

  /** A keyed attempt built without the header, as the app's request is; the header comes below Idem. */
  private Request attempt(boolean expect) {
    Request keyed = FollowUps.keyed(new Request.Builder().url("http://127.0.0.1:1/orders"), "POST",
        RequestBody.create("{}", MediaType.get("application/json")), new KeyedAttempt(support));
    return expect ? keyed.newBuilder().header("Expect", "100-continue").build() : keyed;
  }

  @Test
  void headWithExpectMakesTheBodyHeadFirst() {
    Request request = attempt(true);
    Call call = client.newCall(request);
    ExpectContinueWatch.INSTANCE.requestHeadersEnd(call, request);
    FollowUps.AttemptBody body = request.tag(KeyedAttempt.class).body();
    assertFalse(body.refuse(), "a head-first body is never refused");
    assertFalse(call.isCanceled());
  }

  @Test
  void headWithoutExpectLeavesTheBodyRefusable() {
    Request request = attempt(false);
    ExpectContinueWatch.INSTANCE.requestHeadersEnd(client.newCall(request), request);
    assertTrue(request.tag(KeyedAttempt.class).body().refuse());
  }

  @Test
  void headOfAnAttemptRecordedNotSentCancelsTheCall() {
    Request request = attempt(true);
    FollowUps.AttemptBody body = request.tag(KeyedAttempt.class).body();
    assertTrue(body.refuse());
    Call call = client.newCall(request);
    ExpectContinueWatch.INSTANCE.requestHeadersEnd(call, request);
    assertTrue(call.isCanceled(), "the head of an attempt recorded as not sent must not be flushed");
    assertThrows(IOException.class, () -> body.writeTo(new Buffer()));
  }
}
