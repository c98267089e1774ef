package dev.idem.testkit.webhook;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One signed delivery, ready to POST: the headers (signature included) and the raw body.
 * Immutable; the variants return copies.
 *
 * @param eventId the event's id
 * @param eventType the event's type
 * @param headers the headers to send, signature included
 * @param body the raw body
 */
public record WebhookDelivery(String eventId, String eventType, Map<String, String> headers, byte[] body) {
  /**
   * Makes the delivery, copying the headers and the body.
   *
   * @param eventId the event's id
   * @param eventType the event's type
   * @param headers the headers to send, signature included
   * @param body the raw body
   * @throws NullPointerException if {@code eventId}, {@code headers} or {@code body} is null
   */
  public WebhookDelivery {
    Objects.requireNonNull(eventId, "eventId");
    headers = Map.copyOf(headers);
    body = body.clone();
  }

  /**
   * A copy of the raw body.
   *
   * @return a copy of the raw body
   */
  @Override
  public byte[] body() {
    return body.clone();
  }

  /**
   * The same headers with one body byte changed, as an attacker (or a broken proxy) would send.
   *
   * @param index the byte to flip (its lowest bit); clamped to the body
   * @return the tampered copy
   * @throws IllegalStateException if the body is empty
   */
  public WebhookDelivery tamperedAt(int index) {
    if (body.length == 0) {
      throw new IllegalStateException("an empty body has no byte to tamper with");
    }
    byte[] b = body.clone();
    int i = Math.max(0, Math.min(index, b.length - 1));
    b[i] ^= 1;
    return new WebhookDelivery(eventId, eventType, headers, b);
  }

  /** {@return a copy with the middle body byte changed} */
  public WebhookDelivery tampered() {
    return tamperedAt(body.length / 2);
  }

  /**
   * {@return the copy}
   *
   * @param name a header to add or replace
   * @param value its value
   */
  public WebhookDelivery withHeader(String name, String value) {
    Map<String, String> h = new LinkedHashMap<>(headers);
    h.keySet().removeIf(k -> k.equalsIgnoreCase(name));
    h.put(name, value);
    return new WebhookDelivery(eventId, eventType, h, body);
  }

  /**
   * {@return a copy whose body is longer by {@code extraBytes}}
   *
   * @param extraBytes how many bytes to append to the body (the signature no longer matters:
   *     the receiver must refuse it by size before verifying)
   */
  public WebhookDelivery padded(int extraBytes) {
    byte[] b = java.util.Arrays.copyOf(body, body.length + extraBytes);
    java.util.Arrays.fill(b, body.length, b.length, (byte) ' ');
    return new WebhookDelivery(eventId, eventType, headers, b);
  }
}
