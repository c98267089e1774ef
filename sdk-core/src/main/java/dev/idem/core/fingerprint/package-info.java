/**
 * What identifies the intent of a request, so that one key is never used for two different
 * requests: a {@link dev.idem.core.fingerprint.Fingerprint}, computed by a
 * {@link dev.idem.core.fingerprint.Fingerprinter} (canonical JSON, the semantic headers an
 * application names). The executor and the server's guard compute it the same way; an
 * application names these types only to add semantic headers, and journals store the fingerprint.
 */
package dev.idem.core.fingerprint;
