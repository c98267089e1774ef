/** The idempotency guard as a Jakarta Servlet filter. */
package dev.idem.server.servlet;
