package dev.idem.okhttp.internal;

import java.io.IOException;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * The network interceptor that keeps OkHttp's own follow-ups off keyed attempts, so that every
 * request on the wire is a journaled attempt. {@code IdemOkHttp.install} adds it (first among the
 * network interceptors); the call factory and the resume transports add it to their copy of a
 * client that lacks it. Requests without a {@link KeyedAttempt} tag pass untouched.
 *
 * <p>OkHttp's {@code RetryAndFollowUpInterceptor} sits between the application interceptors and
 * the network ones, and decides from the response whether to send another request: a redirect
 * (3xx with {@code Location}; for 301, 302 and 303 even a one-shot body does not stop it, since the
 * follow-up is a bodyless GET), a repeat of a 503 with {@code Retry-After: 0} or of a 408. For a
 * keyed attempt this interceptor holds those headers back from it on the way up ({@link FollowUps}
 * puts them back above it), so OkHttp returns the response instead of following it. Anything else
 * that would still send a second request of the same attempt is refused here, before it reaches
 * the network, with {@link FollowUpRefusedException}.
 *
 * <p>It also sees the attempt's request as it goes to the network: if that carries
 * {@code Expect: 100-continue} (added by an application interceptor below Idem), the attempt's
 * body is made {@linkplain FollowUps.AttemptBody#headFirst head-first} before the head goes out,
 * so that no failure of it is called not sent, or, if the attempt was recorded as not sent
 * already, it is refused before a connection is sought. A header a network interceptor after this
 * one adds it cannot see: {@link HeadFirstWatch} judges the request OkHttp finally writes.
 *
 * <p>Stateless (the state is in each attempt's tag) and thread-safe.
 */
public enum FollowUpGuard implements Interceptor {
  /** The one instance; its identity tells whether a client has it. */
  INSTANCE;

  @Override
  public Response intercept(Chain chain) throws IOException {
    Request request = chain.request();
    KeyedAttempt attempt = request.tag(Tags.KEYED_ATTEMPT);
    if (attempt == null) {
      return chain.proceed(request);
    }
    if (!attempt.firstOnTheWire()) {
      throw new FollowUpRefusedException("OkHttp was about to send another request (" + request.method() + " "
          + request.url().redact() + ") for a keyed attempt that already had one on the wire; Idem stopped it,"
          + " because every request on the wire must be a journaled attempt. Idem retries with the same key");
    }
    FollowUps.AttemptBody body = attempt.body();
    if (body != null && FollowUps.expectsContinue(request) && !body.headFirst()) {
      // An interceptor below Idem added Expect: 100-continue to an attempt already recorded as not
      // sent (cancelled while it waited for a connection, say): OkHttp would flush its head, key
      // included, before it found the body refused. Nothing of it has reached the network yet.
      throw new IOException("this keyed attempt was cancelled and recorded as not sent before its request went out;"
          + " it is not sent now");
    }
    Response response = chain.proceed(request);
    // Kept so that a refused second request can be judged by what the first one was answered.
    attempt.answered(response);
    return holdFollowUpHeaders(response, attempt);
  }

  /**
   * The response without the headers OkHttp would act on to follow it up, remembered in the tag.
   * OkHttp's {@code CacheInterceptor} sits above this one and stores what this returns: a cacheable
   * 301 or 308 without its Location would be served to every later call of that URL, untagged
   * ones included, as a redirect nobody can follow. So the altered response also says
   * {@code Cache-Control: no-store}, its own Cache-Control held back with the rest. (Running keyed
   * attempts without the cache instead would also skip the cache's invalidation of a URL that a
   * keyed POST, PUT or DELETE changes.)
   */
  private static Response holdFollowUpHeaders(Response response, KeyedAttempt attempt) {
    int code = response.code();
    String name = code >= 300 && code < 400 ? "Location" : code == 503 || code == 408 ? "Retry-After" : null;
    if (name == null || response.headers(name).isEmpty()) {
      return response;
    }
    for (String value : response.headers(name)) {
      attempt.hold(name, value);
    }
    attempt.holdCacheControl(response.headers(CACHE_CONTROL));
    return response.newBuilder().removeHeader(name).header(CACHE_CONTROL, "no-store").build();
  }

  static final String CACHE_CONTROL = "Cache-Control";

  /**
   * {@code client}, or a copy of it (sharing its connection pool and dispatcher) with the Idem
   * interceptor and this guard added where missing: the interceptor after the app's own (a resumed
   * or enqueued attempt passes through it), the guard before the app's network interceptors.
   *
   * @param client the app's client
   * @param idem the adapter's application interceptor
   * @return a client whose keyed attempts put one request each on the wire
   */
  static OkHttpClient installedIn(OkHttpClient client, Interceptor idem) {
    boolean hasIdem = client.interceptors().contains(idem);
    boolean hasGuard = client.networkInterceptors().contains(INSTANCE);
    if (hasIdem && hasGuard) {
      return client;
    }
    OkHttpClient.Builder b = client.newBuilder();
    if (!hasIdem) {
      b.addInterceptor(idem);
    }
    if (!hasGuard) {
      b.networkInterceptors().add(0, INSTANCE);
    }
    return b.build();
  }
}
