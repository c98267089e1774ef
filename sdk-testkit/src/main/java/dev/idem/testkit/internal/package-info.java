/**
 * Implementation of the reference idempotent server. Nothing here is API: types are public only so
 * that {@code dev.idem.testkit} can reach them, and they may change in any release.
 */
package dev.idem.testkit.internal;
