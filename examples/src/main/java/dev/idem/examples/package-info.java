/** The runnable demo, the journal CLI and copyable samples. Not a library: nothing here is API. */
package dev.idem.examples;
