package dev.idem.webhooks;

import java.util.Objects;

/**
 * A provider-specific HMAC scheme, described instead of coded: which headers carry the signature,
 * the id and the timestamp, what content is signed, and how the signature is encoded.
 *
 * <pre>{@code
 * GenericHmac acme = GenericHmac.builder("X-Acme-Signature")
 *     .signaturePrefix("sha256=")
 *     .idHeader("X-Acme-Event-Id")
 *     .timestampHeader("X-Acme-Timestamp")
 *     .signedContent("{timestamp}.{body}")
 *     .build();
 * SignatureScheme scheme = SignatureScheme.hmac(acme);
 * }</pre>
 *
 * <p>Defaults: HmacSHA256, hex, no prefix, signed content {@code {body}}, secrets taken as their
 * UTF-8 bytes, the id read from the body's top-level {@code "id"} when there is no id header, the
 * type from a type header or else the body's {@code "type"}. The signature header may hold several
 * signatures separated by spaces or commas; any may match. Each is found by its prefix, which may
 * itself hold a comma (Svix's {@code v1,}, where the header is {@code v1,<base64> v1,<base64>}); a
 * piece without the prefix, such as {@code t=...} beside {@code v1=...}, is ignored. Without a timestamp header there is no
 * window and replays are recognised by id and remembered signature only. Immutable, thread-safe.
 *
 * <p>A timestamp header goes with {@code {timestamp}} in the template, and the other way round: the
 * window is checked on that header, so it must be signed. A header the signature does not cover is
 * one an attacker sets freely: a captured delivery re-sent with a fresh value would pass the window,
 * and once its event is purged it would be accepted and handled again. For a provider that sends a
 * time but does not sign it, leave the timestamp header unset (no window; replays are then refused
 * by id and remembered signature, for as long as the inbox keeps the event).
 *
 * <p>An id header the template does not sign ({@code {id}}) is not covered by the signature: a
 * captured delivery re-sent under a new id is then recognised by its signature alone. While
 * rotating, with several secrets configured, the same signed content has a valid signature under
 * each, and a replay may carry any one of them (the sender signed with both, or with the old one
 * first): the inbox then refuses a delivery whose signed content it already accepted under any of
 * the configured secrets, as a {@link AcceptResult#REPLAY}. For that such a source computes the
 * MAC under every secret for each delivery, stores the one under the first secret added (add the
 * current secret first, so that it still holds after the old one is removed) and looks the others
 * up, one more indexed read per delivery; with one secret, or with the id signed (in the template,
 * or read from the body), nothing more is computed or read. Sign the id when the provider does.
 *
 * @param signatureHeader the header holding the signature(s), any case
 * @param signaturePrefix the prefix before each signature, such as {@code sha256=}; empty for none
 * @param signatureEncoding HEX or BASE64
 * @param algorithm the JCA MAC algorithm, such as {@code HmacSHA256}
 * @param idHeader the id header, or null to read {@code "id"} from the body
 * @param timestampHeader the timestamp header (epoch seconds), signed by {@code {timestamp}} in the
 *     template, or null when the provider signs none
 * @param typeHeader the type header, or null to read {@code "type"} from the body
 * @param signedContent the signed-content template, with {@code {id}}, {@code {timestamp}} and
 *     {@code {body}}
 * @param secretEncoding how secrets are written: UTF8, BASE64 or HEX
 * @param secretPrefix a prefix removed from secrets before decoding, such as {@code whsec_}; empty
 *     for none
 */
public record GenericHmac(String signatureHeader, String signaturePrefix, Encoding signatureEncoding,
    String algorithm, String idHeader, String timestampHeader, String typeHeader, String signedContent,
    Encoding secretEncoding, String secretPrefix) {
  /** How signatures (and, separately, secrets) are written. */
  public enum Encoding {
    /** Hexadecimal, either case. */
    HEX,
    /** Standard base64 with padding. */
    BASE64,
    /** For secrets only: the secret's UTF-8 bytes are the key. */
    UTF8
  }

  /**
   * Checks the description; {@link #builder} is the readable way to make one.
   *
   * @param signatureHeader as the record's component
   * @param signaturePrefix as the record's component
   * @param signatureEncoding as the record's component
   * @param algorithm as the record's component
   * @param idHeader as the record's component
   * @param timestampHeader as the record's component
   * @param typeHeader as the record's component
   * @param signedContent as the record's component
   * @param secretEncoding as the record's component
   * @param secretPrefix as the record's component
   * @throws NullPointerException if a component other than the three optional headers is null
   * @throws IllegalArgumentException if the signed content does not hold {@code {body}} exactly
   *     once, uses {@code {id}} or {@code {timestamp}} without its header, a timestamp header is set
   *     but the signed content lacks {@code {timestamp}}, the signature encoding is UTF8, the
   *     signature prefix holds a space, or the algorithm is unknown
   */
  public GenericHmac {
    Objects.requireNonNull(signatureHeader, "signatureHeader");
    Objects.requireNonNull(signaturePrefix, "signaturePrefix");
    Objects.requireNonNull(algorithm, "algorithm");
    Objects.requireNonNull(signedContent, "signedContent");
    Objects.requireNonNull(secretEncoding, "secretEncoding");
    Objects.requireNonNull(secretPrefix, "secretPrefix");
    if (Objects.requireNonNull(signatureEncoding, "signatureEncoding") == Encoding.UTF8) {
      throw new IllegalArgumentException("a signature is HEX or BASE64");
    }
    if (signaturePrefix.indexOf(' ') >= 0) {
      // signatures are separated by spaces: such a prefix would never be found, and every delivery refused
      throw new IllegalArgumentException("the signature prefix \"" + signaturePrefix + "\" holds a space, which"
          + " separates signatures in the header; give the prefix written before each signature, such as \"v1,\"");
    }
    int first = signedContent.indexOf("{body}");
    if (first < 0 || signedContent.indexOf("{body}", first + 1) >= 0) {
      throw new IllegalArgumentException("the signed content must contain {body} exactly once: " + signedContent);
    }
    if (signedContent.contains("{id}") && idHeader == null) {
      throw new IllegalArgumentException("the signed content uses {id}; set idHeader");
    }
    if (signedContent.contains("{timestamp}") && timestampHeader == null) {
      throw new IllegalArgumentException("the signed content uses {timestamp}; set timestampHeader");
    }
    if (timestampHeader != null && !signedContent.contains("{timestamp}")) {
      throw new IllegalArgumentException("timestampHeader " + timestampHeader + " is set but the signed content "
          + signedContent + " does not sign it: its replay window would rest on a header anyone can rewrite. Add"
          + " {timestamp} to the signed content as the provider signs it, or, if the provider does not sign its"
          + " time, leave timestampHeader unset (no window; replays are refused by id and remembered signature)");
    }
    try {
      javax.crypto.Mac.getInstance(algorithm);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalArgumentException("unknown MAC algorithm " + algorithm, e);
    }
  }

  /**
   * A builder for a scheme whose signature is in {@code signatureHeader}.
   *
   * @param signatureHeader the header holding the signature(s), any case
   * @return the builder
   * @throws NullPointerException if {@code signatureHeader} is null
   */
  public static Builder builder(String signatureHeader) {
    return new Builder(Objects.requireNonNull(signatureHeader, "GenericHmac's signatureHeader is null; give the name"
        + " of the header that carries the signature, such as \"X-Signature\""));
  }

  /** Builds a {@link GenericHmac}. Not thread-safe. */
  public static final class Builder {
    private final String signatureHeader;
    private String signaturePrefix = "";
    private Encoding signatureEncoding = Encoding.HEX;
    private String algorithm = "HmacSHA256";
    private String idHeader;
    private String timestampHeader;
    private String typeHeader;
    private String signedContent = "{body}";
    private Encoding secretEncoding = Encoding.UTF8;
    private String secretPrefix = "";

    private Builder(String signatureHeader) {
      this.signatureHeader = signatureHeader;
    }

    /**
     * Sets the prefix written before each signature, such as {@code sha256=}.
     *
     * @param prefix written before each signature, such as {@code sha256=}; default none
     * @return this builder
     */
    public Builder signaturePrefix(String prefix) {
      this.signaturePrefix = Objects.requireNonNull(prefix, "prefix");
      return this;
    }

    /**
     * Sets how the signature is encoded: HEX (default) or BASE64.
     *
     * @param encoding HEX (default) or BASE64
     * @return this builder
     * @throws NullPointerException if {@code encoding} is null (UTF8 is refused by {@link #build})
     */
    public Builder signatureEncoding(Encoding encoding) {
      this.signatureEncoding = Objects.requireNonNull(encoding, "encoding");
      return this;
    }

    /**
     * Sets the JCA MAC algorithm: HmacSHA256 (default), HmacSHA512, HmacSHA1...
     *
     * @param algorithm a JCA MAC algorithm: HmacSHA256 (default), HmacSHA512, HmacSHA1...
     * @return this builder
     */
    public Builder algorithm(String algorithm) {
      this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
      return this;
    }

    /**
     * Sets the header with the event id.
     *
     * @param header the header with the event id; default none (the body's {@code "id"})
     * @return this builder
     */
    public Builder idHeader(String header) {
      this.idHeader = Objects.requireNonNull(header, "header");
      return this;
    }

    /**
     * Sets the header with the signing time in epoch seconds, which the signed content must sign
     * as {@code {timestamp}}.
     *
     * @param header the header with the signing time in epoch seconds, which the signed content must
     *     sign ({@code {timestamp}}; {@link #build} refuses it otherwise); default none (no window)
     * @return this builder
     */
    public Builder timestampHeader(String header) {
      this.timestampHeader = Objects.requireNonNull(header, "header");
      return this;
    }

    /**
     * Sets the header with the event type.
     *
     * @param header the header with the event type; default none (the body's {@code "type"})
     * @return this builder
     */
    public Builder typeHeader(String header) {
      this.typeHeader = Objects.requireNonNull(header, "header");
      return this;
    }

    /**
     * Sets the signed content, for example {@code {id}.{timestamp}.{body}}.
     *
     * @param template the signed content, for example {@code {id}.{timestamp}.{body}}; {@code {body}}
     *     must appear exactly once and stands for the raw bytes; default {@code {body}}
     * @return this builder
     */
    public Builder signedContent(String template) {
      this.signedContent = Objects.requireNonNull(template, "template");
      return this;
    }

    /**
     * Sets how the secrets are written, and a prefix to strip before decoding them.
     *
     * @param encoding how secrets are written: UTF8 (default), BASE64 or HEX
     * @param prefix removed before decoding, such as {@code whsec_}; empty for none
     * @return this builder
     */
    public Builder secretEncoding(Encoding encoding, String prefix) {
      this.secretEncoding = Objects.requireNonNull(encoding, "encoding");
      this.secretPrefix = Objects.requireNonNull(prefix, "prefix");
      return this;
    }

    /**
     * {@return the scheme description}
     *
     * @throws IllegalArgumentException if the template lacks {@code {body}} or has it twice, uses
     *     {@code {id}} or {@code {timestamp}} without the matching header, or lacks {@code {timestamp}}
     *     with a timestamp header set, or the algorithm is unknown
     */
    public GenericHmac build() {
      return new GenericHmac(signatureHeader, signaturePrefix, signatureEncoding, algorithm, idHeader,
          timestampHeader, typeHeader, signedContent, secretEncoding, secretPrefix);
    }
  }
}
