/** Internals of the idempotency guard; not an API, may change at any time. */
package dev.idem.server.internal;
