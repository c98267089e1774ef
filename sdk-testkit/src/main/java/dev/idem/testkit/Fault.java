package dev.idem.testkit;

import dev.idem.testkit.internal.FaultSpec;
import dev.idem.testkit.internal.FaultSpec.Kind;
import java.time.Duration;
import java.util.Objects;

/**
 * Something that goes wrong with one request, scripted through a {@link FaultPlan}. Each fault
 * reproduces one case a retrying client has to survive, and says exactly what happened to the
 * effect, so that a test can assert on effects rather than on status codes alone.
 *
 * <p>Faults fall into two groups:
 *
 * <ul>
 *   <li>Faults that replace processing ({@link #dropRequest()}, {@link #status(int)},
 *       {@link #tooManyRequests(Duration)}, {@link #tooManyRequestsUntil(Duration)}): the request
 *       never reaches the idempotency layer. Nothing is claimed, no effect runs, nothing is
 *       stored, so a retry is processed as if it were the first attempt.
 *   <li>Faults that act after processing ({@link #commitThenDropResponse()},
 *       {@link #commitThenDelayResponse(Duration)}, {@link #commitThenStatus(int)}): the request is
 *       processed as usual (a new effect, a replay, a 409, 422 or 400, whatever is due) and the
 *       result is stored if it would have been; only the answer the client gets is spoiled.
 * </ul>
 *
 * <p>{@link #slowProcessing(Duration)} is neither: it stretches processing itself.
 *
 * <p>{@link #redirect(int, String)} and {@link #commitThenRedirect(int, String)} answer a 3xx with a
 * {@code Location}, before and after processing: whether a client follows a redirect of a keyed
 * request, and what it makes of one, is then visible in the effects.
 *
 * <p>A fault that answers with a status of its own can carry extra response headers, through
 * {@link #withHeader(String, String)}: a should-retry hint, a {@code Retry-After} no client can
 * parse.
 *
 * <p>Immutable and thread-safe; one instance may be scheduled many times.
 */
public final class Fault {
  private final FaultSpec spec;
  private final String description;

  private Fault(Kind kind, int status, Duration duration, String description) {
    this(new FaultSpec(kind, status, duration), description);
  }

  private Fault(FaultSpec spec, String description) {
    this.spec = spec;
    this.description = description;
  }

  /**
   * Closes the connection as soon as the request has been read, before any processing. The client
   * sees an I/O error (such as "unexpected end of stream") after it has sent the whole request:
   * an ambiguous failure from its point of view, although here no effect ran and nothing was
   * stored.
   *
   * @return the fault
   */
  public static Fault dropRequest() {
    return new Fault(Kind.DROP_REQUEST, 0, Duration.ZERO, "dropRequest");
  }

  /**
   * The lost response: the request is processed and its result stored, then the connection is
   * closed before a single response byte is written. The client sees an I/O error; the effect
   * exists; a retry with the same key gets the stored result, marked as replayed.
   *
   * @return the fault
   */
  public static Fault commitThenDropResponse() {
    return new Fault(Kind.DROP_RESPONSE, 0, Duration.ZERO, "commitThenDropResponse");
  }

  /**
   * The slow response: the request is processed and its result stored at once, but the response
   * is held back for {@code delay} before its headers are written. With a delay longer than the
   * client's read timeout, the client times out while the effect already exists; a retry gets the
   * stored result, marked as replayed.
   *
   * <p>This is a real server-side wait on the connection's thread; keep it short in tests (a few
   * hundred milliseconds against a client timeout of about a hundred). Closing the server ends it.
   *
   * @return the fault
   * @param delay how long to hold the response; positive
   * @throws IllegalArgumentException if {@code delay} is zero or negative
   */
  public static Fault commitThenDelayResponse(Duration delay) {
    return new Fault(Kind.DELAY_RESPONSE, 0, duration(delay, "delay", false), "commitThenDelayResponse(" + delay + ")");
  }

  /**
   * The error after commit: the request is processed and its result stored, but the client is
   * answered {@code status} (typically 500) with a problem body instead. A retry with the same key
   * gets the stored success, marked as replayed: a client that treats a 5xx as "nothing happened"
   * would be wrong.
   *
   * @return the fault
   * @param status 400..599
   * @throws IllegalArgumentException if {@code status} is out of range
   */
  public static Fault commitThenStatus(int status) {
    return new Fault(Kind.STATUS_AFTER_PROCESSING, inRange(status, 400, 599, "fault"), Duration.ZERO,
        "commitThenStatus(" + status + ")");
  }

  /**
   * Answers a redirect, {@code status} with {@code Location: location}, before any processing: no
   * effect, nothing stored. A client that follows it sends a second request (to {@code location},
   * with the same key unless it drops the header), which the server processes like any other; a
   * client that does not follow it gets the 3xx as its answer.
   *
   * @param status 300..399, such as 307 or 308 (repeat the request there) or 301, 302, 303 (go and
   *     GET it there)
   * @param location the {@code Location} value, such as {@code /moved}
   * @return the fault
   * @throws IllegalArgumentException if {@code status} is not a 3xx or {@code location} could not be
   *     sent as a header value
   */
  public static Fault redirect(int status, String location) {
    return new Fault(Kind.REJECT, inRange(status, 300, 399, "redirect"), Duration.ZERO, "redirect(" + status + ")")
        .withHeader("Location", Objects.requireNonNull(location, "location"));
  }

  /**
   * The Post/Redirect/Get answer: the request is processed and its result stored, but the client
   * is answered {@code status} (typically 303 See Other) with {@code Location: location} instead of
   * the result. The effect exists; a retry with the same key gets the stored result, marked as
   * replayed. A client that takes the redirect for a failure would be wrong.
   *
   * @param status 300..399
   * @param location the {@code Location} value
   * @return the fault
   * @throws IllegalArgumentException if {@code status} is not a 3xx or {@code location} could not be
   *     sent as a header value
   */
  public static Fault commitThenRedirect(int status, String location) {
    return new Fault(Kind.STATUS_AFTER_PROCESSING, inRange(status, 300, 399, "redirect"), Duration.ZERO,
        "commitThenRedirect(" + status + ")").withHeader("Location", Objects.requireNonNull(location, "location"));
  }

  /**
   * Answers {@code status} (such as 503) with a problem body, before any processing: no effect,
   * nothing stored. Schedule it with {@link FaultPlan#forNext(int, Fault)} for N failures in a row.
   *
   * @return the fault
   * @param status 400..599
   * @throws IllegalArgumentException if {@code status} is out of range
   */
  public static Fault status(int status) {
    return new Fault(Kind.REJECT, inRange(status, 400, 599, "fault"), Duration.ZERO, "status(" + status + ")");
  }

  /**
   * Answers 429 with {@code Retry-After} in delta-seconds (rounded up to whole seconds), before any
   * processing: no effect, nothing stored.
   *
   * @return the fault
   * @param retryAfter the wait to announce; zero or positive
   * @throws IllegalArgumentException if {@code retryAfter} is negative
   */
  public static Fault tooManyRequests(Duration retryAfter) {
    return new Fault(Kind.RETRY_AFTER_SECONDS, 429, duration(retryAfter, "retryAfter", true),
        "tooManyRequests(" + retryAfter + ")");
  }

  /**
   * Answers 429 with {@code Retry-After} as an HTTP-date (IMF-fixdate, such as
   * {@code Sun, 06 Nov 1994 08:49:37 GMT}): the server clock's now plus {@code retryAfter}, taken
   * when the request arrives, with the fraction of a second dropped. Before any processing: no
   * effect, nothing stored.
   *
   * @return the fault
   * @param retryAfter how far past now the announced date lies; zero or positive
   * @throws IllegalArgumentException if {@code retryAfter} is negative
   * @see IdempotentServer.Builder#clock(java.time.Clock)
   */
  public static Fault tooManyRequestsUntil(Duration retryAfter) {
    return new Fault(Kind.RETRY_AFTER_DATE, 429, duration(retryAfter, "retryAfter", true),
        "tooManyRequestsUntil(" + retryAfter + ")");
  }

  /**
   * The slow in-flight request: if this request claims its key, it holds the claim for
   * {@code duration} before the effect runs. Duplicates that arrive meanwhile get 409 with
   * {@code Retry-After} (or, on a server built with {@link IdempotentServer.Builder#inFlightWait},
   * wait for the result); those after it get the replay. A request that does not claim (a
   * duplicate, a replay) is not slowed, so the fault can be scheduled on every request of a burst.
   *
   * <p>This is a real server-side wait; keep it short in tests. Closing the server ends it, and
   * the request then gets a 503 without an effect.
   *
   * @return the fault
   * @param duration how long processing takes; positive
   * @throws IllegalArgumentException if {@code duration} is zero or negative
   */
  public static Fault slowProcessing(Duration duration) {
    return new Fault(Kind.SLOW_PROCESSING, 0, duration(duration, "duration", false), "slowProcessing(" + duration + ")");
  }

  /**
   * This fault with one more response header, for the signals a client reads from an error
   * response: a should-retry hint ({@code Fault.status(400).withHeader("X-Should-Retry", "true")}),
   * an unparseable {@code Retry-After} ({@code Fault.status(503).withHeader("Retry-After", "soon")}),
   * a request id. The header is set after the fault's own headers, so it replaces one of the same
   * name, such as the {@code Retry-After} of {@link #tooManyRequests(Duration)}; calling this again
   * with the same name (case-insensitive) replaces the earlier value. Nothing is stored: the header
   * goes on this one spoiled response only, and a later replay does not carry it.
   *
   * <p>Only faults that answer with a status of their own take headers: {@link #status(int)},
   * {@link #commitThenStatus(int)}, {@link #tooManyRequests(Duration)} and
   * {@link #tooManyRequestsUntil(Duration)}.
   *
   * <p>Returns a new fault; this one is unchanged.
   *
   * @param name a header name (an HTTP token)
   * @param value the value, any printable ASCII (it need not be valid for the header, which is the
   *     point of a garbage {@code Retry-After})
   * @return the fault
   * @throws IllegalArgumentException if {@code name} or {@code value} could not be sent as a header
   *     field (an empty or non-token name, a control character or non-ASCII in the value)
   * @throws IllegalStateException if this fault sends no response of its own: drops, delays and
   *     slow processing
   */
  public Fault withHeader(String name, String value) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
    if (!spec.kind().answersItself()) {
      throw new IllegalStateException(this + " sends no response of its own, so it cannot carry headers");
    }
    return new Fault(spec.withHeader(name, value), description + ".withHeader(" + name + ", " + value + ")");
  }

  FaultSpec spec() {
    return spec;
  }

  @Override
  public String toString() {
    return "Fault." + description;
  }

  private static int inRange(int status, int min, int max, String what) {
    if (status < min || status > max) {
      throw new IllegalArgumentException("a " + what + " status is " + min + ".." + max + ", not " + status);
    }
    return status;
  }

  private static Duration duration(Duration d, String name, boolean zeroAllowed) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || (d.isZero() && !zeroAllowed)) {
      throw new IllegalArgumentException(name + (zeroAllowed ? " must not be negative: " : " must be positive: ") + d);
    }
    return d;
  }
}
