package dev.idem.spring.client;

import org.springframework.http.ResponseEntity;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.support.ClientResponseWrapper;
import reactor.core.publisher.Mono;

/**
 * An answered WebClient response whose body broke off while Idem read it for the journal: reading
 * the body gives what arrived, then the error that broke it, as the live connection would have;
 * releasing it, or asking for a bodiless entity, completes, as closing a broken OkHttp body does,
 * because the caller who does not read the body has nothing to learn from it (the status and
 * headers arrived, and the journal records them).
 *
 * <p>Immutable; safe to use from any thread, as the response it wraps.
 */
final class BrokenBodyResponse extends ClientResponseWrapper {
  BrokenBodyResponse(ClientResponse delegate) {
    super(delegate);
  }

  @Override
  public Mono<Void> releaseBody() {
    return super.releaseBody().onErrorComplete();
  }

  @Override
  public Mono<ResponseEntity<Void>> toBodilessEntity() {
    // Not the delegate's, which releases through its own releaseBody and fails.
    return releaseBody().then(Mono.fromSupplier(
        () -> ResponseEntity.status(statusCode()).headers(headers().asHttpHeaders()).<Void>build()));
  }
}
