/**
 * The idempotency protocol's vocabulary, defined once for the client's adapters, the server guard
 * and the test kit: the header names ({@link dev.idem.core.http.ProtocolHeaders}), the one parser of
 * the key header and the key syntax it enforces ({@link dev.idem.core.http.KeyHeader}), and how the
 * key is written into its header ({@link dev.idem.core.http.KeyHeaderFormat}). The other parts of
 * the vocabulary live where their users already look: the status presets in
 * {@link dev.idem.core.ProtocolStatuses}, the secret-header rule in
 * {@link dev.idem.core.spi.RequestSnapshot#isSecretByDefault(String)}, and the response-capture
 * rule in {@link dev.idem.core.spi.adapter.CaptureRule}.
 *
 * <p>Also what the users of every HTTP adapter (OkHttp, java.net.http) configure and catch: what
 * happens to a POST or PATCH not marked as an operation ({@link dev.idem.core.http.UntaggedPolicy}),
 * and the exception that refuses one ({@link dev.idem.core.http.UntaggedRequestException}).
 * Applications name these types through an adapter's builder; how an adapter applies them is in
 * {@link dev.idem.core.spi.adapter}.
 */
package dev.idem.core.http;
