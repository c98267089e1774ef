package dev.idem.webhooks.internal;

import dev.idem.webhooks.RejectionReason;
import dev.idem.webhooks.WebhookRejectedException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Stripe: {@code Stripe-Signature: t=<seconds>,v1=<hex>[,v1=<hex>...]}, HMAC-SHA256 over
 * {@code t.body} keyed with the whole {@code whsec_...} string. Only {@code v1} counts ({@code v0}
 * is Stripe's test scheme). The event id and type are in the body.
 */
public final class StripeVerifier implements Verifier {
  public static final String SIGNATURE = "Stripe-Signature";

  @Override
  public String name() {
    return "stripe";
  }

  /** The signed content is {@code t.body}, and the event id is in the body. */
  @Override
  public boolean signsTimestampAndId() {
    return true;
  }

  /** The event id is in the signed body. */
  @Override
  public boolean signsEventId() {
    return true;
  }

  @Override
  public SchemeResult verify(Headers headers, byte[] body, List<MacKey> keys, long now, long tolerance)
      throws WebhookRejectedException {
    String header = headers.require(SIGNATURE);
    String t = null;
    List<byte[]> v1 = new ArrayList<>();
    for (String item : header.split(",")) {
      int eq = item.indexOf('=');
      if (eq < 0) {
        continue;
      }
      String k = item.substring(0, eq).trim();
      String v = item.substring(eq + 1).trim();
      if (k.equals("t")) {
        t = v;
      } else if (k.equals("v1")) {
        v1.add(Hmac.fromHex(v));
      }
    }
    if (t == null) {
      throw new WebhookRejectedException(RejectionReason.HEADER, SIGNATURE + " has no timestamp (t=)");
    }
    long timestamp = Verifier.seconds(SIGNATURE + " t", t);
    byte[] prefix = (t + ".").getBytes(StandardCharsets.UTF_8);
    List<byte[]> matched = Verifier.match(name(), keys, false, v1, prefix, body);
    Verifier.checkWindow(timestamp, now, tolerance);
    return new SchemeResult(null, null, timestamp, matched);
  }
}
