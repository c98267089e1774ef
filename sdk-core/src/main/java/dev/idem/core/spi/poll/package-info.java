/**
 * The background poll loop Idem's modules share, for those who write one of them: the outbox
 * dispatcher ({@code dev.idem.core.outbox.OutboxDispatcher}) and the webhook processor
 * ({@code idem-webhooks}) both poll through {@link dev.idem.core.spi.poll.PollLoop}, so they
 * schedule, wake up on new work, back off while offline, stop on an {@link java.lang.Error} and
 * own their threads the same way. Applications never name these types.
 */
package dev.idem.core.spi.poll;
