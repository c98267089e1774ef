package dev.idem.okhttp.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.spi.adapter.AdapterSupport;
import java.io.IOException;
import java.net.Socket;
import okhttp3.Call;
import okhttp3.Connection;
import okhttp3.Handshake;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Route;
import okio.Buffer;
import org.junit.jupiter.api.Test;

/**
 * {@link HeadFirstWatch} on the events of a call carrying a keyed attempt: the body becomes
 * head-first when the request OkHttp wrote the head of carries {@code Expect: 100-continue}, or
 * when OkHttp starts writing the head on an HTTP/2 connection (so no failure calls the attempt
 * not sent); an attempt already recorded as not sent gets its call cancelled before the head is
 * flushed, or, on HTTP/2, its head is not written at all. The calls are never executed.
 */
class HeadFirstWatchTest {
  final OkHttpClient client = new OkHttpClient();
  final AdapterSupport support = AdapterSupport.of(IdempotentExecutor.builder().journal(new InMemoryJournal()).build(),
      AdapterSupport.DEFAULT_KEY_HEADER, KeyHeaderFormat.BARE, UntaggedPolicy.PASS_THROUGH);

  /** A keyed attempt built without the header, as the app's request is; the header comes below Idem. */
  private Request attempt(boolean expect) {
    Request keyed = FollowUps.keyed(new Request.Builder().url("http://127.0.0.1:1/orders"), "POST",
        RequestBody.create("{}", MediaType.get("application/json")), new KeyedAttempt(support));
    return expect ? keyed.newBuilder().header("Expect", "100-continue").build() : keyed;
  }

  /** The watch a call sending {@code request} has, as FollowUps adds it. */
  private HeadFirstWatch watch(Call call, Request request) {
    HeadFirstWatch.watch(call, request.tag(KeyedAttempt.class));
    return call.tag(HeadFirstWatch.class);
  }

  private static FollowUps.AttemptBody body(Request request) {
    return request.tag(KeyedAttempt.class).body();
  }

  @Test
  void oneWatchPerCall() {
    Request request = attempt(false);
    Call call = client.newCall(request);
    assertSame(watch(call, request), watch(call, attempt(false)));
  }

  @Test
  void headWithExpectMakesTheBodyHeadFirst() {
    Request request = attempt(true);
    Call call = client.newCall(request);
    watch(call, request).requestHeadersEnd(call, request);
    assertFalse(body(request).refuse(), "a head-first body is never refused");
    assertFalse(call.isCanceled());
  }

  @Test
  void headWithoutExpectLeavesTheBodyRefusable() {
    Request request = attempt(false);
    Call call = client.newCall(request);
    watch(call, request).requestHeadersEnd(call, request);
    assertTrue(body(request).refuse());
  }

  @Test
  void headOfAnAttemptRecordedNotSentCancelsTheCall() {
    Request request = attempt(true);
    FollowUps.AttemptBody body = body(request);
    assertTrue(body.refuse());
    Call call = client.newCall(request);
    watch(call, request).requestHeadersEnd(call, request);
    assertTrue(call.isCanceled(), "the head of an attempt recorded as not sent must not be flushed");
    assertThrows(IOException.class, () -> body.writeTo(new Buffer()));
  }

  @Test
  void headStartedOnHttp2MakesTheBodyHeadFirst() {
    for (Protocol p : new Protocol[] {Protocol.HTTP_2, Protocol.H2_PRIOR_KNOWLEDGE}) {
      Request request = attempt(false);
      Call call = client.newCall(request);
      HeadFirstWatch watch = watch(call, request);
      watch.connectionAcquired(call, connection(p));
      watch.requestHeadersStart(call);
      assertFalse(body(request).refuse(), p + ": its HEADERS may be on the wire before its body");
    }
  }

  @Test
  void http2ConnectionAloneLeavesTheBodyRefusable() {
    Request request = attempt(false);
    Call call = client.newCall(request);
    watch(call, request).connectionAcquired(call, connection(Protocol.HTTP_2));
    assertTrue(body(request).refuse(), "no head was started: nothing of the attempt can be on the wire");
  }

  @Test
  void headStartedOnHttp11LeavesTheBodyRefusable() {
    for (Protocol p : new Protocol[] {Protocol.HTTP_1_1, Protocol.HTTP_1_0}) {
      Request request = attempt(false);
      Call call = client.newCall(request);
      HeadFirstWatch watch = watch(call, request);
      watch.connectionAcquired(call, connection(p));
      watch.requestHeadersStart(call);
      assertTrue(body(request).refuse(), p + " buffers the head until the body is written");
    }
  }

  @Test
  void aLaterHttp11ConnectionOfTheSameCallIsJudgedByItsOwnProtocol() {
    Request first = attempt(false);
    Call call = client.newCall(first);
    HeadFirstWatch watch = watch(call, first);
    watch.connectionAcquired(call, connection(Protocol.HTTP_2));
    watch.connectionReleased(call, connection(Protocol.HTTP_2));
    Request second = attempt(false);
    watch(call, second).connectionAcquired(call, connection(Protocol.HTTP_1_1));
    watch.requestHeadersStart(call);
    assertTrue(body(second).refuse());
  }

  @Test
  void http2HeadOfAnAttemptRecordedNotSentIsNotWritten() {
    Request request = attempt(false);
    FollowUps.AttemptBody body = body(request);
    assertTrue(body.refuse());
    Call call = client.newCall(request);
    HeadFirstWatch watch = watch(call, request);
    watch.connectionAcquired(call, connection(Protocol.HTTP_2));
    // Thrown inside OkHttp's try around writing the head, as its own failure to write it.
    assertThrows(IOException.class, () -> watch.requestHeadersStart(call));
    assertTrue(body.refuse(), "still not sent");
  }

  private static Connection connection(Protocol protocol) {
    return new Connection() {
      @Override
      public Route route() {
        throw new UnsupportedOperationException();
      }

      @Override
      public Socket socket() {
        throw new UnsupportedOperationException();
      }

      @Override
      public Handshake handshake() {
        return null;
      }

      @Override
      public Protocol protocol() {
        return protocol;
      }
    };
  }
}
