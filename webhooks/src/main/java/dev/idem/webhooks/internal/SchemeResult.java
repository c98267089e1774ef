package dev.idem.webhooks.internal;

/**
 * What a scheme established about a delivery whose signature matched.
 *
 * @param eventId the id from a signed header, or null when the scheme keeps it in the body
 * @param eventType the type from a header, or null when it is read from the body
 * @param timestamp the signed timestamp in epoch seconds, or null for schemes without one (GitHub)
 * @param matchedSignature the signature bytes that matched, remembered to recognise replays
 */
public record SchemeResult(String eventId, String eventType, Long timestamp, byte[] matchedSignature) {
}
