package dev.idem.webhooks.internal;

import dev.idem.webhooks.WebhookRejectedException;
import java.util.Collections;
import java.util.List;

/**
 * GitHub: {@code X-Hub-Signature-256: sha256=<hex>}, HMAC-SHA256 over the body alone. GitHub signs
 * no timestamp, so there is no window: replays are recognised by {@code X-GitHub-Delivery} (the
 * event id, unsigned) and by the remembered signature (which a replay under a new delivery id
 * still carries, under whichever configured secret: {@link Verifier#match} with every key). The
 * type is {@code X-GitHub-Event}.
 */
public final class GitHubVerifier implements Verifier {
  public static final String SIGNATURE = "X-Hub-Signature-256";
  public static final String DELIVERY = "X-GitHub-Delivery";
  public static final String EVENT = "X-GitHub-Event";

  @Override
  public String name() {
    return "github";
  }

  @Override
  public SchemeResult verify(Headers headers, byte[] body, List<MacKey> keys, long now, long tolerance)
      throws WebhookRejectedException {
    String sig = headers.require(SIGNATURE);
    String delivery = headers.require(DELIVERY);
    byte[] given = sig.startsWith("sha256=") ? Hmac.fromHex(sig.substring(7)) : null;
    List<byte[]> matched = Verifier.match(name(), keys, true, Collections.singletonList(given), body);
    return new SchemeResult(delivery, headers.first(EVENT), null, matched);
  }
}
