/**
 * The Jakarta Servlet adapter. The servlet API is a {@code provided} dependency: the container
 * brings it, and only apps that use this package need it.
 */
package dev.idem.webhooks.servlet;
