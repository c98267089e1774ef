/**
 * Idem for Spring's HTTP clients: {@link dev.idem.spring.client.IdempotencyInterceptor} for
 * {@code RestClient} and {@code RestTemplate}, {@link dev.idem.spring.client.IdempotencyExchangeFilter}
 * for {@code WebClient}, and {@link dev.idem.spring.client.IdempotentCall}, the request attribute
 * that names a call's operation. The Spring Boot starter puts them on the app's builders.
 */
package dev.idem.spring.client;
