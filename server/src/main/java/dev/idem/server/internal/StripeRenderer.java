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
    // Stripe's status, error type and code for each refusal.
    Shape shape = switch (r.kind()) {
      case KEY_MISSING -> new Shape(400, "idempotency_error", "idempotency_key_missing");
      case KEY_MALFORMED -> new Shape(400, "idempotency_error", "idempotency_key_invalid");
      case KEY_REUSED -> new Shape(400, "idempotency_error", "idempotency_key_reused");
      case IN_FLIGHT, CLAIM_LOST -> new Shape(409, "idempotency_error", "idempotency_key_in_use");
      case BODY_TOO_LARGE -> new Shape(413, "invalid_request_error", "request_too_large");
      case IDENTITY_UNSTORABLE -> new Shape(400, "invalid_request_error", "idempotency_identity_unstorable");
      case STORE_UNAVAILABLE -> new Shape(503, "api_error", "idempotency_store_unavailable");
      case HANDLER_FAILED -> new Shape(500, "api_error", "handler_failed");
    };
    Map<String, List<String>> h = new LinkedHashMap<>();
    h.put("Content-Type", List.of("application/json"));
    h.put(SHOULD_RETRY, List.of(Boolean.toString(r.kind().retryable())));
    if (r.retryAfter() != null) {
      h.put("Retry-After", List.of(ProblemJsonRenderer.seconds(r.retryAfter())));
    }
    String json = "{\"error\":{\"type\":" + Problems.quote(shape.type()) + ",\"code\":" + Problems.quote(shape.code())
        + ",\"message\":" + Problems.quote(r.title() + ". " + r.detail()) + "}}";
    return new GuardResponse(shape.status(), h, json.getBytes(StandardCharsets.UTF_8));
  }

  private record Shape(int status, String type, String code) {}
}
