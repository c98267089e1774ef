/** The idempotency guard as a filter for the JDK's built-in {@code com.sun.net.httpserver}. */
package dev.idem.server.jdkhttp;
