/**
 * Queued delivery: {@link dev.idem.core.outbox.OutboxDispatcher} journals operations on submit and
 * delivers them in the background as they come due, with bounded concurrency, surviving restarts
 * (a new dispatcher picks up whatever the journal holds as pending) and backing off as a whole
 * while the target is unreachable.
 */
package dev.idem.core.outbox;
