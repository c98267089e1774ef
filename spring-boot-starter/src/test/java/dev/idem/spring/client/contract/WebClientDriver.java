package dev.idem.spring.client.contract;

import dev.idem.core.OperationId;
import dev.idem.core.spi.Transport;
import dev.idem.spring.client.IdempotencyExchangeFilter;
import dev.idem.spring.client.IdempotentCall;
import dev.idem.testkit.contract.AdapterContract;
import dev.idem.testkit.contract.AdapterDriver;
import dev.idem.spring.internal.KeyedConnectors;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.springframework.boot.http.client.HttpRedirects;
import org.springframework.boot.http.client.reactive.ClientHttpConnectorBuilder;
import org.springframework.boot.http.client.reactive.ClientHttpConnectorSettings;
import org.springframework.http.MediaType;
import org.springframework.http.RequestEntity;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

/** The WebClient filter on Reactor Netty as Boot builds it, called as an app calls it, and awaited on virtual time. */
final class WebClientDriver implements AdapterDriver {
  @Override
  public Session open(Setup setup) {
    IdempotencyExchangeFilter idem = IdempotencyExchangeFilter.builder(setup.executor()).keyHeader(setup.keyHeader())
        .keyFormat(setup.format()).untaggedPolicy(setup.untagged()).build();
    WebClient client = WebClient.builder().clientConnector(bootsConnector()).filter(idem).build();
    return new Session() {
      @Override
      public Reply send(Call call) throws Exception {
        WebClient.RequestBodySpec spec = client.post().uri(call.url()).contentType(MediaType.APPLICATION_JSON);
        call.headers().forEach((n, v) -> spec.header(n, v));
        IdempotentCall tagged = RestClientDriver.tag(call);
        if (tagged != null) {
          spec.attributes(tagged);
        }
        CompletableFuture<Reply> reply = spec.bodyValue(call.json()).exchangeToMono(res -> res.bodyToMono(String.class)
            .defaultIfEmpty("")
            .map(body -> {
              Optional<IdempotentCall> c = IdempotentCall.from(res.request().getAttributes());
              return new Reply(res.statusCode().value(), body, c.flatMap(IdempotentCall::operationId),
                  c.flatMap(IdempotentCall::state), c.map(IdempotentCall::replayed).orElse(false),
                RestClientDriver.headersOf(res.headers().asHttpHeaders()));
            })).toFuture();
        return AdapterContract.await(setup.time(), reply);
      }

      @Override
      public OperationId enqueue(Call call) throws Exception {
        RequestEntity.BodyBuilder b = RequestEntity.post(call.url()).contentType(MediaType.APPLICATION_JSON);
        call.headers().forEach((n, v) -> b.header(n, v));
        RequestEntity<String> request = b.body(call.json());
        return call.key() == null ? idem.enqueue(call.operation(), request)
            : idem.enqueue(call.operation(), call.key(), request);
      }

      @Override
      public Transport resumeTransport() {
        return idem.resumeTransport(new JdkClientHttpRequestFactory(RestClientDriver.JDK), r -> Map.of());
      }
    };
  }

  /**
   * Reactor Netty as Boot builds it, following redirects, through the starter's wrapper of Boot's
   * connector builder bean, so that the contract sees keyed exchanges' redirects left to Idem and
   * the others' followed.
   */
  static ClientHttpConnector bootsConnector() {
    ClientHttpConnectorBuilder<?> boot = (ClientHttpConnectorBuilder<?>) KeyedConnectors.wrapBuilder(
        ClientHttpConnectorBuilder.reactor());
    return boot.build(ClientHttpConnectorSettings.defaults().withRedirects(HttpRedirects.FOLLOW)
        .withConnectTimeout(Duration.ofSeconds(5)));
  }

  @Override
  public boolean clientFollowsRedirects() {
    return true; // Boot's connector follows redirects; the starter keeps keyed exchanges' to Idem
  }
}
