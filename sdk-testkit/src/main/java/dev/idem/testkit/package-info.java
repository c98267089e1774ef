/** The reference idempotent server on mockwebserver3, and fault plans, for tests. Work pending (issue 3). */
package dev.idem.testkit;
