package dev.idem.okhttp.internal;

import dev.idem.core.spi.adapter.AdapterSupport;
import java.util.ArrayList;
import java.util.List;
import okhttp3.Headers;
import okhttp3.Response;

/**
 * The request tag of one keyed attempt (a fresh instance per attempt), by which
 * {@link FollowUpGuard} tells the attempt's requests from every other call's and counts them. OkHttp
 * copies a request's tags into the follow-ups it builds from it, so a redirect or a repeat of the
 * attempt carries the same instance.
 *
 * <p>It also keeps the response headers the guard held back from OkHttp's follow-up logic, so that
 * {@link FollowUps} puts them back before anyone above OkHttp's internals sees the response.
 *
 * <p>Thread-safe: the guard and the interceptor may run on different threads of one call.
 */
final class KeyedAttempt {
  /** The adapter's rules, whose executor's classifier judges the first answer (see {@link FollowUps}). */
  private final AdapterSupport support;
  private int requests;
  /** Null until the guard holds a header back, which few attempts see. */
  private List<String[]> held;
  /** Whether the guard replaced the response's Cache-Control with {@code no-store}. */
  private boolean cacheControlReplaced;

  /** Whether OkHttp began writing a request head of this attempt (its call's event). */
  private volatile boolean headStarted;

  /** The answer to the attempt's first request on the wire, as the guard got it; null until then. */
  private Response firstAnswer;

  /** The attempt's body as {@link FollowUps#keyed} made it; null for a bodyless attempt. */
  private FollowUps.AttemptBody body;

  /** @param support the adapter's rules, whose executor drives the attempt */
  KeyedAttempt(AdapterSupport support) {
    this.support = support;
  }

  /** The adapter's rules, whose executor drives the attempt. */
  AdapterSupport support() {
    return support;
  }

  /** Remembers the attempt's body, whose verdict the guard may have to settle (see {@link FollowUpGuard}). */
  synchronized void body(FollowUps.AttemptBody body) {
    this.body = body;
  }

  /** The attempt's body as {@link FollowUps#keyed} made it, or null if it has none. */
  synchronized FollowUps.AttemptBody body() {
    return body;
  }

  /** Remembers the answer to the attempt's first request (its status and headers are read later). */
  synchronized void answered(Response response) {
    if (firstAnswer == null) {
      firstAnswer = response;
    }
  }

  /** The answer to the attempt's first request on the wire, or null if it got none. */
  synchronized Response firstAnswer() {
    return firstAnswer;
  }

  /** Counts one request of this attempt reaching the network; true only for the first. */
  synchronized boolean firstOnTheWire() {
    return ++requests == 1;
  }

  /** Notes that OkHttp began writing a request head of this attempt. */
  void headStarted() {
    headStarted = true;
  }

  /** Whether OkHttp began writing a request head of this attempt: it may have been sent. */
  boolean headWasStarted() {
    return headStarted;
  }

  /** Remembers a header the guard removed from the attempt's response. */
  synchronized void hold(String name, String value) {
    if (held == null) {
      held = new ArrayList<>();
    }
    held.add(new String[] {name, value});
  }

  /**
   * Remembers the response's own Cache-Control values (possibly none), which the guard replaced
   * with {@code no-store}.
   */
  synchronized void holdCacheControl(List<String> values) {
    cacheControlReplaced = true;
    for (String value : values) {
      hold(FollowUpGuard.CACHE_CONTROL, value);
    }
  }

  /** {@code response} with the held headers put back, in the order they were held. */
  synchronized Response restore(Response response) {
    if (held == null || held.isEmpty()) {
      return response;  // the guard replaces Cache-Control only along with a held header
    }
    Headers.Builder b = response.headers().newBuilder();
    if (cacheControlReplaced) {
      cacheControlReplaced = false;
      b.removeAll(FollowUpGuard.CACHE_CONTROL);
    }
    for (String[] h : held) {
      // The values came from the wire, which OkHttp reads leniently (a raw UTF-8 Location, a
      // garbage Retry-After): the strict addHeader would refuse one after the answer arrived, and
      // the attempt would count as ambiguous. The names are the guard's own constants.
      b.addUnsafeNonAscii(h[0], h[1]);
    }
    held.clear();
    return response.newBuilder().headers(b.build()).build();
  }
}
