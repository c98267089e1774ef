/** The runnable demo and copyable samples. Not a library: nothing here is API. */
package dev.idem.examples;
