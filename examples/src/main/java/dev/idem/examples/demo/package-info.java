/**
 * The demo: each scenario against the reference server, with a table of keys, attempts and
 * server-side effects, and a non-zero exit if any invariant breaks.
 */
package dev.idem.examples.demo;
