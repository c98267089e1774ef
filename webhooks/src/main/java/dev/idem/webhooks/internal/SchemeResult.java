package dev.idem.webhooks.internal;

import java.util.List;

/**
 * What a scheme established about a delivery whose signature matched.
 *
 * @param eventId the id from a signed header, or null when the scheme keeps it in the body
 * @param eventType the type from a header, or null when it is read from the body
 * @param timestamp the signed timestamp in epoch seconds, or null for schemes without one (GitHub)
 * @param signatures the MACs remembered to recognise replays ({@link Verifier#match}): the first is
 *     stored with the event, the others (under the other secrets, only for a scheme that does not
 *     sign its event id) are looked for among those stored before
 */
public record SchemeResult(String eventId, String eventType, Long timestamp, List<byte[]> signatures) {
}
