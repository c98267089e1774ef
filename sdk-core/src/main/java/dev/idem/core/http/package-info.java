/**
 * What the users of every HTTP adapter (OkHttp, java.net.http) configure and catch, defined once
 * so that the adapters agree: how the key is written into its header
 * ({@link dev.idem.core.http.KeyHeaderFormat}), what happens to a POST or PATCH not marked as an
 * operation ({@link dev.idem.core.http.UntaggedPolicy}), and the exception that refuses one
 * ({@link dev.idem.core.http.UntaggedRequestException}). Applications name these types through an
 * adapter's builder; the executor itself never uses them. How an adapter applies them is in
 * {@link dev.idem.core.spi.adapter}.
 */
package dev.idem.core.http;
