package dev.idem.core;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.spi.ResponseSnapshot;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which answers of the server carry the idempotency protocol's three signals: the key was reused
 * with another payload, the key is missing, and a request with this key is still in flight.
 * Servers differ here, so the executor asks this object before its {@link Classifier}:
 * <ul>
 *   <li><b>key reused</b>: the operation ends FAILED and the call throws
 *       {@link IdempotencyKeyReusedException} (with a {@link IdemEvent.KeyMismatch} event), on the
 *       execution that got the answer and on every later execution that finds it in the journal.
 *       After an earlier attempt that may have taken effect (a read timeout, a 500), the server
 *       most likely holds the key from that attempt: the operation ends UNCERTAIN instead, with
 *       {@link OperationUncertainException}, as for any permanent answer then;</li>
 *   <li><b>in flight</b>: not a failure but a wait, bounded by the policy's deadline and
 *       {@link RetryPolicy#maxInFlightAttempts()}, at least {@link RetryPolicy#inFlightMinDelay()};</li>
 *   <li><b>key missing</b>: a configuration error; the operation ends FAILED at once (UNCERTAIN
 *       after an earlier attempt that may have taken effect).</li>
 * </ul>
 * A status matches a signal only if the signal's body predicate accepts the response too. Key
 * reuse is tested first, then in flight, then key missing, so one status may mean two signals
 * told apart by the body (see {@link #reuseAs409()}).
 *
 * <p>Presets:
 * <table>
 *   <caption>Presets</caption>
 *   <tr><th>preset</th><th>key reused</th><th>key missing</th><th>in flight</th></tr>
 *   <tr><td>{@link #ietfDraft()} (the default)</td><td>422</td><td>400 whose body names the key</td>
 *       <td>409</td></tr>
 *   <tr><td>{@link #reuseAs417()}</td><td>417</td><td>400 whose body names the key</td><td>409</td></tr>
 *   <tr><td>{@link #reuseAs409()}</td><td>409 whose body says reused, different or mismatch, and
 *       not in progress</td><td>400 whose body names the key</td><td>any other 409</td></tr>
 * </table>
 * Immutable and thread-safe; predicates must be thread-safe and must not block.
 *
 * <p>A body predicate that throws (one that parses a JSON error, given a proxy's HTML page) is
 * logged (WARN) and read the cautious way, as the presets lean: not key reused, not key missing
 * (either would end the operation FAILED at once), but in flight, which only waits and ends
 * UNCERTAIN at worst. So a status that both reuse and in flight use is taken as in flight when
 * the reuse predicate cannot tell. Nothing a predicate throws escapes these methods.
 */
public final class ProtocolStatuses {
  private static final Logger LOG = LoggerFactory.getLogger(ProtocolStatuses.class);
  private static final Predicate<ResponseSnapshot> ANY = r -> true;
  private static final Predicate<ResponseSnapshot> NAMES_THE_KEY =
      r -> bodyMentions(r, List.of("idempotency", "idempotent"));
  // Misreading "in flight" as "reused" would end FAILED while the first request may still take
  // effect; misreading the other way only waits until the deadline and ends UNCERTAIN. So a 409 is
  // reuse only if its body says so and says nothing about the request still running.
  private static final List<String> REUSE_WORDS = List.of("reuse", "mismatch", "different", "does not match",
      "doesn't match", "fingerprint", "same parameters");
  private static final List<String> RUNNING_WORDS = List.of("in progress", "in flight", "being processed",
      "processing", "concurrent", "in use", "still");
  private static final Predicate<ResponseSnapshot> SAYS_REUSED =
      r -> bodyMentions(r, REUSE_WORDS) && !bodyMentions(r, RUNNING_WORDS);

  private static final ProtocolStatuses IETF = builder().build();
  private static final ProtocolStatuses REUSE_417 = builder().keyReused(417).build();
  private static final ProtocolStatuses REUSE_409 = reuseAs409(SAYS_REUSED);

  private final Signal keyReused;
  private final Signal keyMissing;
  private final Signal inFlight;

  private ProtocolStatuses(Builder b) {
    this.keyReused = b.keyReused;
    this.keyMissing = b.keyMissing;
    this.inFlight = b.inFlight;
  }

  /**
   * The IETF httpapi idempotency-key draft: 422 key reused, 400 (with a body about the key) key
   * missing, 409 in flight. The executor's default.
   *
   * @return the preset
   */
  public static ProtocolStatuses ietfDraft() {
    return IETF;
  }

  /**
   * Servers that answer 417 Expectation Failed to a key reused with another payload; otherwise as
   * {@link #ietfDraft()}.
   *
   * @return the preset
   */
  public static ProtocolStatuses reuseAs417() {
    return REUSE_417;
  }

  /**
   * Servers that answer 409 both to a reused key and to a key still in flight. A 409 is taken as
   * reuse when its body (case-insensitive) contains "reuse", "mismatch", "different", "does not
   * match", "fingerprint" or "same parameters" and none of "in progress", "in flight", "being
   * processed", "processing", "concurrent", "in use" or "still"; every other 409 is in flight. The
   * rule leans towards in flight on purpose: that mistake only waits, the other would report FAILED
   * while the effect may exist. If your server's bodies differ, use {@link #reuseAs409(Predicate)}.
   *
   * @return the preset
   */
  public static ProtocolStatuses reuseAs409() {
    return REUSE_409;
  }

  /**
   * Servers that answer 409 both to a reused key and to a key still in flight, told apart by
   * {@code isReuse}; every 409 it rejects is in flight. Otherwise as {@link #ietfDraft()}.
   *
   * @param isReuse true for a 409 that means "key reused with another payload"
   * @return the settings
   * @throws NullPointerException if {@code isReuse} is null
   */
  public static ProtocolStatuses reuseAs409(Predicate<ResponseSnapshot> isReuse) {
    return builder().keyReused(409, isReuse).build();
  }

  /**
   * A builder starting from {@link #ietfDraft()}.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * {@return true if it says the key was used with another payload}
   *
   * @param response a response
   */
  public boolean isKeyReused(ResponseSnapshot response) {
    return keyReused.test(response);
  }

  /**
   * {@return true if it says a request with this key is still in flight (and not key reuse)}
   *
   * @param response a response
   */
  public boolean isInFlight(ResponseSnapshot response) {
    return !isKeyReused(response) && inFlight.test(response);
  }

  /**
   * {@return true if it says the key is missing or malformed (and neither of the other signals)}
   *
   * @param response a response
   */
  public boolean isKeyMissing(ResponseSnapshot response) {
    return !isKeyReused(response) && !isInFlight(response) && keyMissing.test(response);
  }

  /** {@return the status that means key reuse} */
  public int keyReusedStatus() {
    return keyReused.status;
  }

  /** {@return the status that means key missing} */
  public int keyMissingStatus() {
    return keyMissing.status;
  }

  /** {@return the status that means in flight} */
  public int inFlightStatus() {
    return inFlight.status;
  }

  @Override
  public String toString() {
    return "ProtocolStatuses{keyReused=" + keyReused.status + ", keyMissing=" + keyMissing.status + ", inFlight="
        + inFlight.status + "}";
  }

  private static boolean bodyMentions(ResponseSnapshot r, List<String> words) {
    // Hyphens and underscores as spaces, so "in-progress" and "key_in_use" match too.
    String body = new String(r.body(), StandardCharsets.UTF_8).toLowerCase(Locale.ROOT).replace('-', ' ')
        .replace('_', ' ');
    return words.stream().anyMatch(body::contains);
  }

  /**
   * One signal: its status, its body predicate, and the answer when that predicate throws (the
   * app's code; a JSON parser on a proxy's HTML page, say).
   */
  private record Signal(int status, Predicate<ResponseSnapshot> body, boolean whenPredicateThrows, String name) {
    boolean test(ResponseSnapshot r) {
      if (r.status() != status) {
        return false;
      }
      try {
        return body.test(r);
      } catch (RuntimeException e) {
        // The class only: its message may quote the body.
        LOG.warn("the {} body predicate threw {} on an HTTP {}; taken as {}", name, e.getClass().getName(), status,
            whenPredicateThrows ? "a match" : "no match");
        return whenPredicateThrows;
      }
    }
  }

  /** Builds {@link ProtocolStatuses}, starting from {@link #ietfDraft()}. Not thread-safe. */
  public static final class Builder {
    private Signal keyReused = keyReusedSignal(422, ANY);
    private Signal keyMissing = keyMissingSignal(400, NAMES_THE_KEY);
    private Signal inFlight = inFlightSignal(409, ANY);

    private Builder() {}

    /**
     * Sets the status that means key reuse, whatever the body.
     *
     * @param status the status that means key reuse, whatever the body; default 422
     * @return this builder
     * @throws IllegalArgumentException if {@code status} is not a 4xx status
     */
    public Builder keyReused(int status) {
      return keyReused(status, ANY);
    }

    /**
     * Sets the status that means key reuse, and which responses of that status mean it.
     *
     * @param status the status that means key reuse; default 422
     * @param body accepts the responses of that status that mean it; default any
     * @return this builder
     * @throws IllegalArgumentException if {@code status} is not a 4xx status
     */
    public Builder keyReused(int status, Predicate<ResponseSnapshot> body) {
      this.keyReused = keyReusedSignal(checked(status), Objects.requireNonNull(body, "body"));
      return this;
    }

    /**
     * Sets the status that means the key is missing or malformed, and which responses of that status
     * mean it.
     *
     * @param status the status that means key missing or malformed; default 400
     * @param body accepts the responses of that status that mean it; default: the body contains
     *     "idempotency" or "idempotent" (a plain 400 is the app's own validation error)
     * @return this builder
     * @throws IllegalArgumentException if {@code status} is not a 4xx status
     */
    public Builder keyMissing(int status, Predicate<ResponseSnapshot> body) {
      this.keyMissing = keyMissingSignal(checked(status), Objects.requireNonNull(body, "body"));
      return this;
    }

    /**
     * Sets the status that means a request with this key is still in flight, and which responses of
     * that status mean it.
     *
     * @param status the status that means a request with this key is still in flight; default 409
     * @param body accepts the responses of that status that mean it; default any
     * @return this builder
     * @throws IllegalArgumentException if {@code status} is not a 4xx status
     */
    public Builder inFlight(int status, Predicate<ResponseSnapshot> body) {
      this.inFlight = inFlightSignal(checked(status), Objects.requireNonNull(body, "body"));
      return this;
    }

    /** {@return the settings} */
    public ProtocolStatuses build() {
      return new ProtocolStatuses(this);
    }

    private static int checked(int status) {
      if (status < 400 || status > 499) {
        throw new IllegalArgumentException("a protocol signal is a 4xx status: " + status);
      }
      return status;
    }

    // When a predicate cannot tell, the cautious reading: not reuse and not key missing (either
    // would end FAILED at once), but in flight (a wait, which ends UNCERTAIN at worst).
    private static Signal keyReusedSignal(int status, Predicate<ResponseSnapshot> body) {
      return new Signal(status, body, false, "key-reused");
    }

    private static Signal keyMissingSignal(int status, Predicate<ResponseSnapshot> body) {
      return new Signal(status, body, false, "key-missing");
    }

    private static Signal inFlightSignal(int status, Predicate<ResponseSnapshot> body) {
      return new Signal(status, body, true, "in-flight");
    }
  }
}
