/** {@code idem-journal}, the operators' command line over an Idem journal (picocli). */
package dev.idem.examples.cli;
