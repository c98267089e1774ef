/**
 * The webhook inbox in a Spring app: {@link dev.idem.spring.webhooks.WebhookSubscription} beans are
 * the handlers the starter's processor runs; sources and secrets come from {@code idem.webhooks.*}.
 */
package dev.idem.spring.webhooks;
