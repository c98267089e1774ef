package dev.idem.okhttp.internal;

import okhttp3.Call;
import okhttp3.EventListener;
import okhttp3.Request;

/**
 * Makes a keyed attempt's body {@linkplain FollowUps.AttemptBody#headFirst head-first} when the
 * request OkHttp actually writes carries {@code Expect: 100-continue}, however the header got
 * there. OkHttp's {@code CallServerInterceptor} decides on the request that the last network
 * interceptor handed it, and no interceptor of Idem's can be sure to be that one: an app network
 * interceptor added after {@code IdemOkHttp.install} runs after {@link FollowUpGuard}, and a
 * client with only the application interceptor has no network interceptor of Idem's at all. An
 * event listener of the call hears {@code requestHeadersEnd} with that very request, once its
 * head is written to the connection's buffer and before OkHttp flushes it to wait for
 * {@code 100 Continue}: the body's verdict is settled there, before the server can have the head.
 *
 * <p>If the body was refused already (its attempt was recorded as not sent: a cancel that raced
 * with OkHttp starting the call), the head must not go out either: the listener cancels the call,
 * which closes the exchange before the flush. (OkHttp's own cancel does that already when the
 * refusal came with a cancel of this call, as it does; this is the backstop.)
 *
 * <p>Added once to each OkHttp call that carries a keyed attempt ({@link #watch}); requests
 * without a {@link KeyedAttempt} tag (an interceptor below Idem that built a request from scratch
 * drops it) are not judged. Stateless and thread-safe.
 */
final class ExpectContinueWatch extends EventListener {
  static final ExpectContinueWatch INSTANCE = new ExpectContinueWatch();

  private ExpectContinueWatch() {}

  /**
   * Adds the listener to {@code call} unless it has it: the call's tag remembers it, so that the
   * live call's retries, which all run through its one chain, do not stack up copies.
   *
   * @throws RuntimeException what {@code call.addEventListener} or {@code call.tag} throws (a
   *     {@link Call} of another library's); the attempt has not been sent then
   */
  static void watch(Call call) {
    call.tag(Tags.EXPECT_CONTINUE_WATCH, () -> {
      call.addEventListener(INSTANCE);
      return INSTANCE;
    });
  }

  @Override
  public void requestHeadersEnd(Call call, Request request) {
    KeyedAttempt attempt = request.tag(Tags.KEYED_ATTEMPT);
    FollowUps.AttemptBody body = attempt == null ? null : attempt.body();
    if (body != null && FollowUps.expectsContinue(request) && !body.headFirst()) {
      call.cancel();
    }
  }
}
