package dev.idem.server.internal;

import dev.idem.server.GuardRenderer;
import dev.idem.server.GuardResponse;
import dev.idem.server.Refusal;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Refusals in Stripe's error shape, which Stripe's client libraries (and clients written like them)
 * recognise: they raise an error only when the body has an {@code error} member.
 */
public final class StripeRenderer implements GuardRenderer {
  /** The one instance: it holds no state. */
  public static final StripeRenderer INSTANCE = new StripeRenderer();
  /** Stripe's header that tells its clients whether to retry, overriding their own rules. */
  public static final String SHOULD_RETRY = "Stripe-Should-Retry";

  private StripeRenderer() {}

  @Override
  public GuardResponse refusal(Refusal r) {
    int status = switch (r.kind()) {
      case KEY_MISSING, KEY_MALFORMED, KEY_REUSED -> 400;
      case IN_FLIGHT, CLAIM_LOST -> 409;
      case BODY_TOO_LARGE -> 413;
      case STORE_UNAVAILABLE -> 503;
      case HANDLER_FAILED -> 500;
    };
    String type = switch (r.kind()) {
      case KEY_MISSING, KEY_MALFORMED, KEY_REUSED, IN_FLIGHT, CLAIM_LOST -> "idempotency_error";
      case BODY_TOO_LARGE -> "invalid_request_error";
      case STORE_UNAVAILABLE, HANDLER_FAILED -> "api_error";
    };
    String code = switch (r.kind()) {
      case KEY_MISSING -> "idempotency_key_missing";
      case KEY_MALFORMED -> "idempotency_key_invalid";
      case KEY_REUSED -> "idempotency_key_reused";
      case IN_FLIGHT, CLAIM_LOST -> "idempotency_key_in_use";
      case BODY_TOO_LARGE -> "request_too_large";
      case STORE_UNAVAILABLE -> "idempotency_store_unavailable";
      case HANDLER_FAILED -> "handler_failed";
    };
    Map<String, List<String>> h = new LinkedHashMap<>();
    h.put("Content-Type", List.of("application/json"));
    h.put(SHOULD_RETRY, List.of(Boolean.toString(r.kind().retryable())));
    if (r.retryAfter() != null) {
      h.put("Retry-After", List.of(ProblemJsonRenderer.seconds(r.retryAfter())));
    }
    String json = "{\"error\":{\"type\":" + Problems.quote(type) + ",\"code\":" + Problems.quote(code)
        + ",\"message\":" + Problems.quote(r.title() + ". " + r.detail()) + "}}";
    return new GuardResponse(status, h, json.getBytes(StandardCharsets.UTF_8));
  }
}
