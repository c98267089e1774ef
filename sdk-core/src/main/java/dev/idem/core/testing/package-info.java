/**
 * For tests only: {@link dev.idem.core.testing.VirtualTime}, the one fake clock, sleeper and
 * scheduler of Idem's own tests and of apps that test their use of Idem. It lives in the core, not
 * in the test kit, so that every module's tests reach it (the test kit depends on the server, so
 * the server's and the core's tests cannot use the test kit).
 */
package dev.idem.core.testing;
