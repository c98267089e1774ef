package dev.idem.core;

import dev.idem.core.internal.DefaultClassifier;
import dev.idem.core.internal.ShouldRetryHeaderClassifier;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.ResponseSnapshot;
import java.io.IOException;
import java.util.Objects;
import java.util.Optional;

/**
 * Decides how an attempt ended: success, safe to retry, ambiguous, transient, or permanent.
 *
 * <p>Classifiers compose: each may answer {@link Optional#empty()} ("no opinion"), and
 * {@link #orElse(Classifier)} asks the next one. Put your special cases first and
 * {@link #defaults()} last:
 *
 * <pre>{@code
 * Classifier c = Classifier.forStatus(404, Verdict.transientFailure("replica lag"))
 *     .orElse(Classifier.defaults());
 * }</pre>
 *
 * <p>The executor uses the first answer it gets; if every classifier in a chain abstains, a
 * response is taken as PERMANENT and an exception as AMBIGUOUS (the cautious choices). The
 * protocol's own answers (key reused, key in flight, key missing; see {@link ProtocolStatuses})
 * are recognised before any classifier is asked, so that what they mean does not depend on the
 * classifier chain. A classifier that throws, or answers null instead of {@link Optional#empty()},
 * is logged (WARN), and {@link #defaults()} judges that attempt instead; the attempt's recorded
 * reason says so. That holds for an Error too (a {@code NoClassDefFoundError} for a library
 * missing at run time, an {@code AssertionError}, a {@code StackOverflowError}), but not for the
 * JVM's own ({@code OutOfMemoryError}, {@code InternalError}), which the call throws as it is.
 *
 * <p>An exception is judged more cautiously than a response: only the default table can prove that
 * nothing was sent (the SAFE row below; a transport or interceptor that knows it sent nothing
 * throws {@link RequestNotSentException}). For any other exception the request may have taken
 * effect, whatever the verdict: SUCCESS, SAFE and TRANSIENT are recorded as AMBIGUOUS (still
 * retried), and PERMANENT stops the retries but ends the operation UNCERTAIN, never FAILED.
 * Implementations must be thread-safe and must not block.
 */
public interface Classifier {
  /**
   * Classifies a response that arrived; empty for no opinion.
   *
   * @param response the attempt's response, with status, headers and (bounded) body
   * @return the verdict, or empty to let the next classifier in the chain decide
   */
  Optional<Verdict> classify(ResponseSnapshot response);

  /**
   * Classifies a failure to get a response; empty for no opinion.
   *
   * @param failure what the transport threw instead of returning a response
   * @return the verdict, or empty to let the next classifier in the chain decide
   */
  Optional<Verdict> classify(IOException failure);

  /**
   * Returns a classifier that asks this one first and {@code next} when this one abstains.
   *
   * @param next the fallback
   * @return the chained classifier; thread-safe if both are
   * @throws NullPointerException if {@code next} is null
   */
  default Classifier orElse(Classifier next) {
    Objects.requireNonNull(next, "next");
    Classifier first = this;
    return new Classifier() {
      @Override
      public Optional<Verdict> classify(ResponseSnapshot response) {
        return first.classify(response).or(() -> next.classify(response));
      }

      @Override
      public Optional<Verdict> classify(IOException failure) {
        return first.classify(failure).or(() -> next.classify(failure));
      }
    };
  }

  /**
   * The default table:
   * <table>
   *   <caption>Default classification</caption>
   *   <tr><th>signal</th><th>class</th></tr>
   *   <tr><td>connect refused, DNS failure, TLS handshake failure, connect timeout (java.net.http's,
   *       or the JDK socket's "Connect timed out"),
   *       {@link RequestNotSentException}</td><td>SAFE</td></tr>
   *   <tr><td>any other IOException (read timeout, reset, EOF)</td><td>AMBIGUOUS</td></tr>
   *   <tr><td>2xx</td><td>SUCCESS</td></tr>
   *   <tr><td>409 (this key is still in flight)</td><td>AMBIGUOUS</td></tr>
   *   <tr><td>301, 302, 303 (a redirect to GET elsewhere, which is how a server may answer a POST
   *       it processed; the adapters never follow a keyed request's redirect)</td><td>AMBIGUOUS</td></tr>
   *   <tr><td>500, 502, 504, and other 5xx but 501, 503 and 505 (the server may have acted before
   *       failing: a 500 after the commit, a gateway that lost or gave up waiting for the backend's
   *       answer)</td><td>AMBIGUOUS</td></tr>
   *   <tr><td>408, 425, 429, 503 (the server says it did not process the request)</td><td>TRANSIENT</td></tr>
   *   <tr><td>422 (key reused with another payload), 400, other 4xx, 501, 505, 1xx, other 3xx (307
   *       and 308 ask for the same request at another URL: not acted on)</td><td>PERMANENT</td></tr>
   * </table>
   * It always answers. AMBIGUOUS and TRANSIENT are both retried with the same key; they differ when
   * the retries give up: after an AMBIGUOUS attempt the operation ends UNCERTAIN, after TRANSIENT
   * and SAFE ones only, FAILED. Idem's design table had 500, 502 and 504 TRANSIENT, so an order
   * committed behind a gateway's 502 and followed by an outage's 503s ended FAILED; the guarantee
   * that failure is never reported while the effect may exist wins over that table.
   *
   * <p><b>A replayed answer stops the retries.</b> Whatever classifier is set, a response the
   * server marks as the replay of its stored answer for the key (the executor's
   * {@link IdempotentExecutor#replayHeader()}, {@code Idempotent-Replayed: true}) that the classifier
   * would retry (AMBIGUOUS, TRANSIENT or SAFE) is not retried: another attempt with the same key
   * only gets the same answer. A replayed 303 See Other (after a POST: "done, the result is there")
   * ends the operation SUCCEEDED with that response, as a replayed 2xx does; any other replayed
   * status ends it at once as giving up would, UNCERTAIN if any attempt may have taken effect (a
   * replayed 500, 502, 301 or 302 may), FAILED only if none may have (a stored 503). A first 303
   * without the marker stays AMBIGUOUS. A replayed status the classifier calls PERMANENT or SUCCESS
   * ends as it would without the marker.
   *
   * @return the shared, stateless default classifier
   */
  static Classifier defaults() {
    return DefaultClassifier.INSTANCE;
  }

  /**
   * Honors a server's explicit hint, such as Stripe's {@code Stripe-Should-Retry}: {@code true}
   * makes a failed response TRANSIENT, or AMBIGUOUS where {@link #defaults()} says the status may
   * follow the request's effect (301, 302, 303, 409, 500, 502, 504, other 5xx but 501, 503 and 505),
   * so that the hint never turns such a status into a FAILED ending; {@code false} makes it
   * PERMANENT, except on those same statuses, where it gives no opinion (a PERMANENT verdict there
   * would end the operation FAILED while the effect may exist; the next classifier decides, and
   * {@link #defaults()} retries it with the same key, which a server that stored its answer replays,
   * and ends UNCERTAIN if no 2xx comes); 2xx responses, missing or garbage values, and exceptions get
   * no opinion. Chain it before {@link #defaults()}.
   *
   * @param headerName the hint header, case-insensitive
   * @return a classifier that reads that header and abstains when it cannot tell
   */
  static Classifier shouldRetryHeader(String headerName) {
    return new ShouldRetryHeaderClassifier(headerName);
  }

  /**
   * Classifies one status code as given, and abstains on everything else.
   *
   * @param status the HTTP status code
   * @param verdict the verdict for it
   * @return a stateless classifier for that one status
   * @throws NullPointerException if {@code verdict} is null
   */
  static Classifier forStatus(int status, Verdict verdict) {
    Objects.requireNonNull(verdict, "verdict");
    return new Classifier() {
      @Override
      public Optional<Verdict> classify(ResponseSnapshot response) {
        return response.status() == status ? Optional.of(verdict) : Optional.empty();
      }

      @Override
      public Optional<Verdict> classify(IOException failure) {
        return Optional.empty();
      }
    };
  }
}
