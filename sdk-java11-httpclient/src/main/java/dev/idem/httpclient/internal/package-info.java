/**
 * Internals of the java.net.http adapter: body capture, attempt building, response buffering and
 * the per-call transports. Not API: anything here may change without notice.
 */
package dev.idem.httpclient.internal;
