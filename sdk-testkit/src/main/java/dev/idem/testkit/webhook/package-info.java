/**
 * A webhook sender for tests: signs like Standard Webhooks, Stripe and GitHub, and delivers like a
 * real provider (retries with backoff, duplicates, out-of-order delivery), or like an attacker
 * (replays an old delivery, tampers with a byte, signs with a stale secret). JDK only.
 */
package dev.idem.testkit.webhook;
