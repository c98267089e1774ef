/**
 * Implementation of the reference idempotent server, and support for Idem's own adapter tests.
 * Nothing here is API: types are public only so that {@code dev.idem.testkit} and those tests can
 * reach them, and they may change in any release.
 */
package dev.idem.testkit.internal;
