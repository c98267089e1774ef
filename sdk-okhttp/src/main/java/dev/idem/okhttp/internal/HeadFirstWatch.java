package dev.idem.okhttp.internal;

import java.io.IOException;
import okhttp3.Call;
import okhttp3.Connection;
import okhttp3.EventListener;
import okhttp3.Protocol;
import okhttp3.Request;

/**
 * Makes a keyed attempt's body {@linkplain FollowUps.AttemptBody#headFirst head-first} when the
 * request's head may go out, and be acted on, before a byte of its body: the body rule ("nothing
 * of the body written, so not sent") then no longer applies to it. Two cases, both judged from the
 * call's own events, which see what OkHttp actually writes after every interceptor:
 * <ul>
 *   <li><b>A multiplexed connection (HTTP/2, h2c prior knowledge).</b> OkHttp writes the HEADERS
 *       frame, key included, into the connection's shared frame writer before the body, and
 *       anything that flushes that writer (another stream's frames, a PING ack, the RST_STREAM it
 *       sends when this stream's body fails, a closed send window, the connection's GOAWAY) puts
 *       it on the wire; an HTTP/2 server typically dispatches its handler on HEADERS and streams
 *       the body. So on {@code requestHeadersStart} on such a connection, before the HEADERS are
 *       written, the body is made head-first. Before that event (no connection yet, a refused
 *       connection, an interceptor failing) the attempt's head cannot be on the wire, and on
 *       HTTP/1.x OkHttp buffers the head until the body is written: the rule holds there.</li>
 *   <li><b>{@code Expect: 100-continue}.</b> OkHttp's {@code CallServerInterceptor} decides on the
 *       request the last network interceptor handed it, and no interceptor of Idem's can be sure
 *       to be that one (an app network interceptor added after {@code IdemOkHttp.install}, a client
 *       with only the application interceptor). {@code requestHeadersEnd} carries that very
 *       request, once its head is in the connection's buffer and before OkHttp flushes it to wait
 *       for {@code 100 Continue}.</li>
 * </ul>
 *
 * <p>It also tells the attempt when OkHttp begins writing one of its heads
 * ({@link KeyedAttempt#headWasStarted}): from then on no failure's type proves the request was not
 * sent ({@link FollowUps#typeHiddenIfSentBefore}).
 *
 * <p>If the body was refused already (its attempt was recorded as not sent: a cancel that raced
 * with OkHttp starting the call), the head must not go out either. On a multiplexed connection the
 * listener fails the exchange before the HEADERS are written (a cancel is not enough there: OkHttp's
 * HTTP/2 codec opens the stream, writing its HEADERS, before it looks at the cancel, and then
 * resets it, which flushes them); for {@code Expect: 100-continue} it cancels the call, which
 * closes the exchange before the flush.
 *
 * <p>One per OkHttp call that carries a keyed attempt ({@link #watch}); it knows the attempt the
 * call's chain is sending now, since {@code requestHeadersStart} does not carry the request. Thread
 * safe: the call's events and {@link #watch} may come from different threads of one call.
 */
final class HeadFirstWatch extends EventListener {
  /** The keyed attempt the call's chain is sending now; null before the first. */
  private volatile KeyedAttempt attempt;
  /** Whether the connection the call holds multiplexes streams over a shared frame writer. */
  private volatile boolean multiplexed;

  private HeadFirstWatch() {}

  /**
   * Adds a watch to {@code call} unless it has one (the call's tag remembers it, so that the live
   * call's retries, which all run through its one chain, do not stack up copies), and makes
   * {@code attempt} the one it judges.
   *
   * @throws RuntimeException what {@code call.addEventListener} or {@code call.tag} throws (a
   *     {@link Call} of another library's); the attempt has not been sent then
   */
  static void watch(Call call, KeyedAttempt attempt) {
    HeadFirstWatch watch = call.tag(Tags.HEAD_FIRST_WATCH, () -> {
      HeadFirstWatch added = new HeadFirstWatch();
      call.addEventListener(added);
      return added;
    });
    watch.attempt = attempt;
  }

  @Override
  public void connectionAcquired(Call call, Connection connection) {
    Protocol protocol = connection.protocol();
    // Anything but HTTP/1.x: a protocol added to OkHttp later is judged the cautious way.
    multiplexed = protocol != Protocol.HTTP_1_1 && protocol != Protocol.HTTP_1_0;
  }

  @Override
  public void connectionReleased(Call call, Connection connection) {
    multiplexed = false;
  }

  @Override
  public void requestHeadersStart(Call call) {
    KeyedAttempt current = attempt;
    if (current != null) {
      current.headStarted();
    }
    if (!multiplexed) {
      return;
    }
    FollowUps.AttemptBody body = current == null ? null : current.body();
    if (body != null && !body.headFirst()) {
      // OkHttp's exchange takes an IOException from here as its own failure to write the head
      // (the event is fired inside its try); any other exception would escape its bookkeeping.
      throw HeadFirstWatch.<RuntimeException>unchecked(new IOException("this keyed attempt was cancelled and recorded as"
          + " not sent before its request went out; its HTTP/2 HEADERS are not written now"));
    }
  }

  @Override
  public void requestHeadersEnd(Call call, Request request) {
    KeyedAttempt tagged = request.tag(Tags.KEYED_ATTEMPT);
    FollowUps.AttemptBody body = tagged == null ? null : tagged.body();
    if (body != null && FollowUps.expectsContinue(request) && !body.headFirst()) {
      call.cancel();
    }
  }

  /**
   * Throws {@code e} as it is, though {@link EventListener}'s methods (Kotlin's, which declare no
   * exceptions) do not declare it: the compiler's check is erased, the JVM has none.
   */
  @SuppressWarnings("unchecked")
  private static <T extends Throwable> RuntimeException unchecked(Throwable e) throws T {
    throw (T) e;
  }
}
