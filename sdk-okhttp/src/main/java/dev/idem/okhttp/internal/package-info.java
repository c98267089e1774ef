/** Internals of the OkHttp adapter; not an API, and may change in any release. */
package dev.idem.okhttp.internal;
