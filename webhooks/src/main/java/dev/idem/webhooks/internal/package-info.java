/** Internals of the webhooks module: signature schemes, the inbox store and its SQL dialects. Not API. */
package dev.idem.webhooks.internal;
