package dev.idem.webhooks;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A delivery whose signature matched and whose timestamp is in the window. Only
 * {@link WebhookSource#verify} makes one, so holding one proves verification happened; the inbox
 * accepts nothing else. Immutable and thread-safe.
 */
public final class VerifiedWebhook {
  private final String source;
  private final String eventId;
  private final String eventType;
  private final Instant signedAt;
  private final Instant receivedAt;
  private final byte[] body;
  private final byte[] signatureDigest;
  private final List<byte[]> otherSignatureDigests;
  private final boolean idSigned;

  /** A delivery of a scheme that does not sign its event id (the safe assumption), with one secret. */
  VerifiedWebhook(String source, String eventId, String eventType, Instant signedAt, Instant receivedAt, byte[] body,
      byte[] signatureDigest) {
    this(source, eventId, eventType, signedAt, receivedAt, body, signatureDigest, List.of(), false);
  }

  VerifiedWebhook(String source, String eventId, String eventType, Instant signedAt, Instant receivedAt, byte[] body,
      byte[] signatureDigest, List<byte[]> otherSignatureDigests, boolean idSigned) {
    this.source = source;
    this.eventId = eventId;
    this.eventType = eventType;
    this.signedAt = signedAt;
    this.receivedAt = receivedAt;
    this.body = body;
    this.signatureDigest = signatureDigest;
    this.otherSignatureDigests = otherSignatureDigests;
    this.idSigned = idSigned;
  }

  /** {@return the source's name, as configured on {@link WebhookSource}} */
  public String source() {
    return source;
  }

  /**
   * {@return the provider's event id (Standard Webhooks {@code webhook-id}, Stripe's body
   * {@code id}, GitHub's {@code X-GitHub-Delivery}); for a provider that sends none,
   * {@code sha256:} and the hex digest of the body}
   */
  public String eventId() {
    return eventId;
  }

  /** {@return the event type; empty when the delivery names none} */
  public String eventType() {
    return eventType;
  }

  /** {@return when the provider signed it, for schemes that sign a timestamp} */
  public Optional<Instant> signedAt() {
    return Optional.ofNullable(signedAt);
  }

  /** {@return when the receiver's clock verified it} */
  public Instant receivedAt() {
    return receivedAt;
  }

  /** {@return a copy of the raw body bytes, exactly as signed} */
  public byte[] body() {
    return body.clone();
  }

  byte[] rawBody() {
    return body;
  }

  /** What the inbox remembers of the signature that matched to recognise a replay ({@code SignatureDigest}). */
  byte[] signatureDigest() {
    return signatureDigest;
  }

  /**
   * What the inbox looks for besides, to recognise a replay that carries another configured
   * secret's signature ({@code SignatureDigest.others}); empty for one secret, or a scheme that
   * signs its event id.
   */
  List<byte[]> otherSignatureDigests() {
    return otherSignatureDigests;
  }

  /**
   * Whether the scheme signs the event id, so that a replay cannot carry another one: the inbox then
   * need not remember the signatures of later deliveries of the event to refuse their replays.
   */
  boolean idSigned() {
    return idSigned;
  }

  @Override
  public String toString() {
    return "VerifiedWebhook[" + source + "/" + eventId + ", type " + eventType + ", " + body.length + " bytes]";
  }
}
