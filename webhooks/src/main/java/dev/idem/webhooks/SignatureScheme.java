package dev.idem.webhooks;

import dev.idem.webhooks.internal.GenericHmacVerifier;
import dev.idem.webhooks.internal.GitHubVerifier;
import dev.idem.webhooks.internal.StandardWebhooksVerifier;
import dev.idem.webhooks.internal.StripeVerifier;
import dev.idem.webhooks.internal.Verifier;
import java.util.Objects;

/**
 * How a provider signs its deliveries. Pick one of the factories; each checks the signature over
 * the raw body bytes with a constant-time comparison, and then the signed timestamp's window.
 *
 * <table>
 *   <caption>Schemes</caption>
 *   <tr><th>scheme</th><th>signature</th><th>event id</th><th>window</th></tr>
 *   <tr><td>{@link #standardWebhooks()}</td><td>{@code webhook-signature: v1,<base64> ...} over
 *       {@code id.timestamp.body}, secret {@code whsec_<base64>}; or the same under
 *       {@code svix-signature}</td><td>{@code webhook-id} (or {@code svix-id})</td>
 *       <td>{@code webhook-timestamp} (or {@code svix-timestamp})</td></tr>
 *   <tr><td>{@link #stripe()}</td><td>{@code Stripe-Signature: t=..,v1=<hex>,...} over
 *       {@code t.body}, the whole {@code whsec_...} string as key</td><td>body {@code "id"}</td>
 *       <td>{@code t}</td></tr>
 *   <tr><td>{@link #github()}</td><td>{@code X-Hub-Signature-256: sha256=<hex>} over the body</td>
 *       <td>{@code X-GitHub-Delivery}</td><td>none: GitHub signs no time</td></tr>
 *   <tr><td>{@link #hmac(GenericHmac)}</td><td colspan="3">as described</td></tr>
 * </table>
 *
 * <p>The event type comes from the body's top-level {@code "type"} (read only after the signature
 * matched), or from {@code X-GitHub-Event} for GitHub. Immutable and thread-safe.
 */
public final class SignatureScheme {
  private final Verifier verifier;

  private SignatureScheme(Verifier verifier) {
    this.verifier = verifier;
  }

  /**
   * {@return the Standard Webhooks scheme (as used by Svix and others)} A delivery without
   * {@code webhook-signature} is read from Svix's names for the same scheme, {@code svix-id},
   * {@code svix-timestamp} and {@code svix-signature} (Clerk and Resend send those): one set of names
   * or the other, never a mix, and the {@code webhook-*} set when a delivery carries both.
   */
  public static SignatureScheme standardWebhooks() {
    return new SignatureScheme(new StandardWebhooksVerifier());
  }

  /** {@return Stripe's {@code Stripe-Signature} scheme} */
  public static SignatureScheme stripe() {
    return new SignatureScheme(new StripeVerifier());
  }

  /** {@return GitHub's {@code X-Hub-Signature-256} scheme} */
  public static SignatureScheme github() {
    return new SignatureScheme(new GitHubVerifier());
  }

  /**
   * {@return that scheme}
   *
   * @param spec the description of a provider's HMAC scheme
   */
  public static SignatureScheme hmac(GenericHmac spec) {
    return new SignatureScheme(new GenericHmacVerifier(Objects.requireNonNull(spec, "spec")));
  }

  /**
   * {@return the scheme's name: {@code standard-webhooks}, {@code stripe}, {@code github} or
   * {@code hmac}}
   */
  public String name() {
    return verifier.name();
  }

  Verifier verifier() {
    return verifier;
  }

  @Override
  public String toString() {
    return "SignatureScheme[" + name() + "]";
  }
}
