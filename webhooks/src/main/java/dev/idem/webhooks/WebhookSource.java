package dev.idem.webhooks;

import dev.idem.storage.StoredText;
import dev.idem.webhooks.internal.Headers;
import dev.idem.webhooks.internal.Hmac;
import dev.idem.webhooks.internal.JsonFields;
import dev.idem.webhooks.internal.MacKey;
import dev.idem.webhooks.internal.SchemeResult;
import dev.idem.webhooks.internal.SignatureDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One sender of webhooks: its name (the inbox deduplicates by name and event id), its signature
 * scheme, its secrets, and the limits applied before anything is stored.
 *
 * <pre>{@code
 * WebhookSource stripe = WebhookSource.builder("stripe", SignatureScheme.stripe())
 *     .secret(System.getenv("STRIPE_WEBHOOK_SECRET"))
 *     .secret(System.getenv("STRIPE_WEBHOOK_SECRET_OLD"))   // only while rotating: both verify
 *     .build();
 * }</pre>
 *
 * <p>Defaults: tolerance 300 s either way, body cap 1 MiB, the system UTC clock. Verification
 * reads the raw bytes only, compares in constant time, and reads the body's JSON only after the
 * signature matched. The secrets are kept as keys in memory and never printed
 * ({@link #toString()} shows their count). Immutable and thread-safe.
 */
public final class WebhookSource {
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
  static final int MAX_ID_CHARS = 255;

  private final String name;
  private final SignatureScheme scheme;
  private final List<MacKey> keys;
  private final Duration tolerance;
  private final int maxBodyBytes;
  private final Clock clock;

  private WebhookSource(Builder b) {
    this.name = b.name;
    this.scheme = b.scheme;
    this.keys = List.copyOf(b.keys);
    this.tolerance = b.tolerance;
    this.maxBodyBytes = b.maxBodyBytes;
    this.clock = b.clock;
  }

  /**
   * A builder for a source.
   *
   * @param name letters, digits, {@code . _ -}, at most 64; stored with each event
   * @param scheme how this sender signs
   * @return the builder
   * @throws IllegalArgumentException if the name has other characters
   * @throws NullPointerException if an argument is null
   */
  public static Builder builder(String name, SignatureScheme scheme) {
    return new Builder(name, scheme);
  }

  /**
   * Verifies a delivery.
   *
   * @param headers the request headers, names in any case
   * @param rawBody the body bytes exactly as received; never a re-serialized object
   * @return the verified delivery
   * @throws WebhookRejectedException with TOO_LARGE, HEADER, SIGNATURE or TIMESTAMP
   * @throws NullPointerException if an argument is null
   */
  public VerifiedWebhook verify(Map<String, ? extends List<String>> headers, byte[] rawBody)
      throws WebhookRejectedException {
    return verify(headers, rawBody, true);
  }

  /**
   * @param copyBody false only when the caller made {@code rawBody} for this delivery and keeps no
   *     reference to it (the receiver reading a stream), so that nothing can change it after it
   *     was verified
   */
  VerifiedWebhook verify(Map<String, ? extends List<String>> headers, byte[] rawBody, boolean copyBody)
      throws WebhookRejectedException {
    Objects.requireNonNull(headers, "headers");
    Objects.requireNonNull(rawBody, "rawBody");
    if (rawBody.length > maxBodyBytes) {
      throw tooLarge(rawBody.length);
    }
    Instant now = clock.instant();
    SchemeResult r = scheme.verifier().verify(Headers.of(headers), rawBody, keys, now.getEpochSecond(),
        tolerance.getSeconds());
    String id = r.eventId();
    String type = r.eventType();
    if (id == null || type == null) {
      JsonFields.IdAndType fields = JsonFields.read(rawBody, id == null, type == null);
      id = id != null ? id : fields.id();
      type = type != null ? type : fields.type();
    }
    if (id == null || id.isEmpty()) {
      id = "sha256:" + Hmac.toHex(Hmac.sha256(rawBody));
    }
    if (id.length() > MAX_ID_CHARS) {
      throw new WebhookRejectedException(RejectionReason.HEADER, "the event id is longer than " + MAX_ID_CHARS);
    }
    // An id or type is an identity (deduplication, routing): stored as sent or refused, never
    // changed. PostgreSQL refuses a NUL (a JSON body may escape one), and the failed insert
    // answered 503 on every redelivery; the drivers write an unpaired surrogate (JSON may escape
    // one too) as '?', so two events' ids became one and the second was taken for a duplicate.
    // A 400 tells the provider to stop.
    if (StoredText.hasUnstorable(id)) {
      throw new WebhookRejectedException(RejectionReason.HEADER,
          "the event id holds a NUL (U+0000) or an unpaired surrogate, which no store keeps as sent");
    }
    type = type == null ? "" : type;
    if (type.length() > MAX_ID_CHARS) {
      throw new WebhookRejectedException(RejectionReason.HEADER, "the event type is longer than " + MAX_ID_CHARS);
    }
    if (StoredText.hasUnstorable(type)) {
      throw new WebhookRejectedException(RejectionReason.HEADER,
          "the event type holds a NUL (U+0000) or an unpaired surrogate, which no store keeps as sent");
    }
    boolean ordered = scheme.verifier().signsTimestampAndId();
    return new VerifiedWebhook(name, id, type, r.timestamp() == null ? null : Instant.ofEpochSecond(r.timestamp()),
        now, copyBody ? rawBody.clone() : rawBody, SignatureDigest.of(r, ordered), SignatureDigest.others(r, ordered),
        scheme.verifier().signsEventId());
  }

  WebhookRejectedException tooLarge(long length) {
    return new WebhookRejectedException(RejectionReason.TOO_LARGE,
        "the body has " + (length < 0 ? "more than " + maxBodyBytes : Long.toString(length))
            + " bytes; the cap is " + maxBodyBytes);
  }

  /** {@return the source's name} */
  public String name() {
    return name;
  }

  /** {@return the signature scheme} */
  public SignatureScheme scheme() {
    return scheme;
  }

  /** {@return how far a signed timestamp may be from now, either way} */
  public Duration tolerance() {
    return tolerance;
  }

  /** {@return the largest body accepted, in bytes} */
  public int maxBodyBytes() {
    return maxBodyBytes;
  }

  /** {@return the clock verification uses} */
  public Clock clock() {
    return clock;
  }

  @Override
  public String toString() {
    return "WebhookSource[" + name + ", " + scheme.name() + ", " + keys.size() + " secret(s), tolerance " + tolerance
        + ", max " + maxBodyBytes + " bytes]";
  }

  /** Builds a {@link WebhookSource}. Not thread-safe. */
  public static final class Builder {
    private final String name;
    private final SignatureScheme scheme;
    private final List<MacKey> keys = new ArrayList<>();
    private Duration tolerance = Duration.ofSeconds(300);
    private int maxBodyBytes = 1 << 20;
    private Clock clock = Clock.systemUTC();

    private Builder(String name, SignatureScheme scheme) {
      Objects.requireNonNull(name, "the webhook source name is null; give the sender's name, such as \"stripe\""
          + " (it is stored with each event)");
      if (!NAME.matcher(name).matches()) {
        throw new IllegalArgumentException("a source name is 1 to 64 letters, digits, '.', '_' or '-': " + name);
      }
      this.name = name;
      this.scheme = Objects.requireNonNull(scheme, () -> "webhook source \"" + name + "\": the signature scheme is"
          + " null; give SignatureScheme.standardWebhooks(), SignatureScheme.stripe(), SignatureScheme.github() or"
          + " SignatureScheme.hmac(...)");
    }

    /**
     * Adds a secret. Add the current one and, while rotating, the previous one after it: a delivery
     * signed with either verifies. Remove the old one when the rotation ends, so that a stale secret
     * stops verifying. Where the event id is not signed (GitHub, a {@link GenericHmac} id header
     * outside its template), a replay under a new id is refused under whichever secret it carries
     * a signature; what is stored is the MAC under the secret added first.
     *
     * <p>One line ending at the end, {@code \n} or {@code \r\n}, is dropped: it is the end of the
     * line of a secret file ({@code echo secret > file}, Docker and Kubernetes secrets made from
     * one), or of a variable set from such a file, never part of a secret a provider shows on one
     * line; Spring Boot's {@code configtree:} drops it the same way. Any other line break (a second
     * one at the end, a lone {@code \r}, one inside) is refused, as no signing secret holds one.
     * Spaces and tabs, at either end, stay part of the secret: a secret the two parties chose may
     * end in one.
     *
     * @param secret as the provider shows it (for example {@code whsec_...}), or as read from a
     *     file with its last line ending
     * @return this builder
     * @throws NullPointerException if it is null (typically an unset environment variable); the
     *     message names the source and the variable the docs read it from
     * @throws IllegalArgumentException if it is empty, blank, holds a line break besides the one
     *     line ending dropped at its end, or is malformed for the scheme, or if it decodes (a
     *     {@code whsec_} base64 secret, a {@link GenericHmac} secret after its prefix) to an empty
     *     key or one of only whitespace or zero bytes, which anyone could sign with; the message
     *     names the source, never the secret
     */
    public Builder secret(String secret) {
      if (secret == null) {
        // Almost always System.getenv of a variable that is not set: say which, not just "secret".
        throw new NullPointerException("webhook source \"" + name + "\": the secret is null. If it comes from an"
            + " environment variable (such as " + secretVariable(name) + ") or a property, that setting is not set:"
            + " set it to the endpoint's signing secret from the sender's dashboard");
      }
      if (secret.isEmpty()) {
        throw new IllegalArgumentException("webhook source \"" + name + "\": the secret is empty; set it to the"
            + " endpoint's signing secret from the sender's dashboard");
      }
      if (secret.isBlank()) {
        // A variable set to a space, a secret file holding only a newline: with such a key anyone
        // could sign deliveries that verify.
        throw new IllegalArgumentException("webhook source \"" + name + "\": the secret is blank (only whitespace);"
            + " set it to the endpoint's signing secret from the sender's dashboard");
      }
      String kept = withoutLineEnding(secret);
      if (kept.indexOf('\n') >= 0 || kept.indexOf('\r') >= 0) {
        // Kept, the secret would be refused as malformed or answer 401 to every delivery, and
        // neither would say why; dropping more could change a secret that was meant.
        throw new IllegalArgumentException("webhook source \"" + name + "\": the secret holds a line break (CR or"
            + " LF); only one line ending at its very end, a secret file's, is dropped. A signing secret is one"
            + " line: if it is read from a file, leave only the secret's line in it");
      }
      MacKey key;
      try {
        key = scheme.verifier().key(kept);
      } catch (IllegalArgumentException e) {
        // The verifiers' and MacKey's messages never quote the secret.
        throw new IllegalArgumentException("webhook source \"" + name + "\": " + e.getMessage(), e);
      }
      keys.add(key);
      return this;
    }

    /**
     * Sets how far a signed timestamp may be from now, either way.
     *
     * @param tolerance how far a signed timestamp may be from now, either way; default 300 s
     * @return this builder
     * @throws IllegalArgumentException if negative
     */
    public Builder tolerance(Duration tolerance) {
      if (Objects.requireNonNull(tolerance, () -> "webhook source \"" + name + "\": tolerance is null; give a"
          + " Duration, or leave it unset for the default of 300 s").isNegative()) {
        throw new IllegalArgumentException("tolerance must not be negative: " + tolerance);
      }
      this.tolerance = tolerance;
      return this;
    }

    /**
     * Sets the largest body accepted.
     *
     * @param maxBodyBytes the largest body accepted; default 1 MiB (1,048,576)
     * @return this builder
     * @throws IllegalArgumentException if below 1
     */
    public Builder maxBodyBytes(int maxBodyBytes) {
      if (maxBodyBytes < 1) {
        throw new IllegalArgumentException("maxBodyBytes must be positive: " + maxBodyBytes);
      }
      this.maxBodyBytes = maxBodyBytes;
      return this;
    }

    /**
     * Sets the clock for the timestamp window.
     *
     * @param clock the clock for the timestamp window; default {@link Clock#systemUTC()}
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** {@code secret} without one {@code \n} or {@code \r\n} at its end, the end of a file's line. */
    private static String withoutLineEnding(String secret) {
      if (secret.endsWith("\r\n")) {
        return secret.substring(0, secret.length() - 2);
      }
      return secret.endsWith("\n") ? secret.substring(0, secret.length() - 1) : secret;
    }

    /** The environment variable the docs' snippets read a source's secret from: STRIPE_WEBHOOK_SECRET. */
    private static String secretVariable(String name) {
      return name.toUpperCase(java.util.Locale.ROOT).replaceAll("[^A-Z0-9]", "_") + "_WEBHOOK_SECRET";
    }

    /**
     * {@return the source}
     *
     * @throws IllegalStateException if no secret was added
     */
    public WebhookSource build() {
      if (keys.isEmpty()) {
        throw new IllegalStateException("add at least one secret to source " + name);
      }
      return new WebhookSource(this);
    }
  }
}
