/** The runnable demo, the journal CLI and copyable samples. Work pending (issue 6). */
package dev.idem.examples;
