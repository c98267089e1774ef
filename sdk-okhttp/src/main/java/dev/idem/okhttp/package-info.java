/**
 * OkHttp adapter: an application interceptor (so Retrofit works unchanged) and a small facade,
 * {@link dev.idem.okhttp.IdemOkHttp}. Tag a request with an {@link dev.idem.okhttp.IdempotentOperation}
 * to make it one logical operation with one durable key.
 */
package dev.idem.okhttp;
