/** The receiving side (seed 001): verified webhooks into a durable inbox, processed once. */
package dev.idem.webhooks;
