package dev.idem.server.internal;

import dev.idem.server.GuardRenderer;
import dev.idem.server.GuardResponse;
import dev.idem.server.Refusal;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The guard's default answers: RFC 9457 problem documents, statuses as the guard suggests. */
public final class ProblemJsonRenderer implements GuardRenderer {
  /** The one instance: it holds no state. */
  public static final ProblemJsonRenderer INSTANCE = new ProblemJsonRenderer();

  private ProblemJsonRenderer() {}

  @Override
  public GuardResponse refusal(Refusal r) {
    Map<String, List<String>> h = new LinkedHashMap<>();
    h.put("Content-Type", List.of(Problems.MEDIA_TYPE));
    if (r.retryAfter() != null) {
      h.put("Retry-After", List.of(seconds(r.retryAfter())));
    }
    return new GuardResponse(r.status(), h, Problems.json(r.status(), type(r.kind()), r.title(), r.detail()));
  }

  /**
   * The last part of the problem type URI of a refusal; stable, clients match on it.
   *
   * @param kind the refusal
   * @return such as {@code idempotency-key-in-flight}
   */
  static String type(Refusal.Kind kind) {
    return switch (kind) {
      case KEY_MISSING -> "idempotency-key-missing";
      case KEY_MALFORMED -> "idempotency-key-malformed";
      case KEY_REUSED -> "idempotency-key-reused";
      case IN_FLIGHT -> "idempotency-key-in-flight";
      case CLAIM_LOST -> "idempotency-claim-lost";
      case BODY_TOO_LARGE -> "body-too-large";
      case IDENTITY_UNSTORABLE -> "idempotency-identity-unstorable";
      case STORE_UNAVAILABLE -> "store-unavailable";
      case HANDLER_FAILED -> "handler-failed";
    };
  }

  /**
   * A {@code Retry-After} in delta-seconds, rounded up: a {@code Retry-After: 0} for a wait of
   * 300 ms would invite an immediate, useless retry.
   *
   * @param d the wait
   * @return whole seconds
   */
  static String seconds(Duration d) {
    return Long.toString(d.getSeconds() + (d.getNano() > 0 ? 1 : 0));
  }
}
