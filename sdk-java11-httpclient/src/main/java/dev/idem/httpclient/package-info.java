/**
 * A decorator of {@link java.net.http.HttpClient} that sends non-idempotent calls with one durable
 * idempotency key per logical operation, sync and async. Start at
 * {@link dev.idem.httpclient.IdempotentHttpClient}.
 */
package dev.idem.httpclient;
