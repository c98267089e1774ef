package dev.idem.spring.client.contract;

import dev.idem.core.OperationId;
import dev.idem.core.spi.Transport;
import dev.idem.spring.client.IdempotencyInterceptor;
import dev.idem.spring.client.IdempotentCall;
import dev.idem.testkit.contract.AdapterDriver;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.springframework.http.MediaType;
import org.springframework.http.RequestEntity;
import dev.idem.spring.internal.KeyedRedirects;
import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.boot.http.client.ClientHttpRequestFactorySettings;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

/**
 * The RestClient interceptor, called as an app calls it: {@code post()...attributes(call)...exchange}.
 * The one thing it unwraps is RestClient's own {@link ResourceAccessException}, which carries every
 * {@link java.io.IOException} an interceptor throws, Idem's included.
 */
final class RestClientDriver implements AdapterDriver {
  static final HttpClient JDK = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  @Override
  public Session open(Setup setup) {
    IdempotencyInterceptor idem = IdempotencyInterceptor.builder(setup.executor()).keyHeader(setup.keyHeader())
        .keyFormat(setup.format()).untaggedPolicy(setup.untagged()).build();
    RestClient client = RestClient.builder().requestFactory(bootsFactory(setup.keyHeader()))
        .requestInterceptor(idem).build();
    return new Session() {
      @Override
      public Reply send(Call call) throws Exception {
        RestClient.RequestBodySpec spec = client.post().uri(call.url()).contentType(MediaType.APPLICATION_JSON);
        call.headers().forEach((n, v) -> spec.header(n, v));
        IdempotentCall tagged = tag(call);
        if (tagged != null) {
          spec.attributes(tagged);
        }
        try {
          return spec.body(call.json()).exchange((req, res) -> {
            String body = new String(res.getBody().readAllBytes(), StandardCharsets.UTF_8);
            Optional<IdempotentCall> c = IdempotentCall.from(req.getAttributes());
            return new Reply(res.getStatusCode().value(), body, c.flatMap(IdempotentCall::operationId),
                c.flatMap(IdempotentCall::state), c.map(IdempotentCall::replayed).orElse(false),
                headersOf(res.getHeaders()));
          });
        } catch (ResourceAccessException e) {
          if (e.getCause() instanceof Exception cause) {
            throw cause;
          }
          throw e;
        }
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
        return idem.resumeTransport(new JdkClientHttpRequestFactory(JDK), r -> Map.of());
      }
    };
  }

  static IdempotentCall tag(Call call) {
    if (call.operation() == null) {
      return null;
    }
    IdempotentCall c = IdempotentCall.named(call.operation());
    return call.key() == null ? c : c.withKey(call.key());
  }

  /**
   * The request factory as a Boot app gets it with the starter: Boot's JDK factory builder with
   * {@code spring.http.client.redirects}' default (follow), wrapped as the starter wraps that
   * builder's bean, so that the contract sees keyed requests' redirects left to Idem and the
   * others' followed.
   */
  @SuppressWarnings("unchecked")
  static ClientHttpRequestFactory bootsFactory(String keyHeader) {
    ClientHttpRequestFactoryBuilder<ClientHttpRequestFactory> boot =
        (ClientHttpRequestFactoryBuilder<ClientHttpRequestFactory>) KeyedRedirects.wrapBuilder(
            ClientHttpRequestFactoryBuilder.jdk().withHttpClientCustomizer(b -> b.version(HttpClient.Version.HTTP_1_1)),
            keyHeader);
    return boot.build(ClientHttpRequestFactorySettings.defaults()
        .withRedirects(ClientHttpRequestFactorySettings.Redirects.FOLLOW).withConnectTimeout(Duration.ofSeconds(5)));
  }

  @Override
  public boolean clientFollowsRedirects() {
    return true; // Boot's factory follows redirects; the starter keeps keyed requests' to Idem
  }

  static java.util.Map<String, java.util.List<String>> headersOf(org.springframework.http.HttpHeaders headers) {
    java.util.Map<String, java.util.List<String>> out = new java.util.HashMap<>();
    headers.toSingleValueMap().keySet().forEach(name -> out.put(name, headers.get(name)));
    return out;
  }
}
