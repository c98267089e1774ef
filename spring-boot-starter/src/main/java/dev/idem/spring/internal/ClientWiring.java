package dev.idem.spring.internal;

import dev.idem.spring.client.IdempotencyInterceptor;
import java.util.List;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

/**
 * Puts Idem on the app's RestClient and RestTemplate builders. WebFlux's side is
 * {@link WebClientWiring}, a class of its own: the verifier loads the types a class's methods
 * convert between, so one class holding both made an app without WebFlux fail to start
 * ({@code NoClassDefFoundError: ExchangeStrategies} while wrapping Boot's RestClient.Builder).
 */
public final class ClientWiring {
  private ClientWiring() {}

  /** The RestClient.Builder bean, wrapped so that {@code interceptor} is last at each build. */
  public static Object restClientBuilder(Object bean, IdempotencyInterceptor interceptor) {
    return LastInChain.wrap(RestClient.Builder.class, (RestClient.Builder) bean, b -> {
      ((RestClient.Builder) b).requestInterceptors(list -> last(list, interceptor));
      return b;
    });
  }

  /** A RestTemplate bean, with {@code interceptor} added last. */
  public static void restTemplate(Object bean, IdempotencyInterceptor interceptor) {
    RestTemplate template = (RestTemplate) bean;
    List<ClientHttpRequestInterceptor> list = new java.util.ArrayList<>(template.getInterceptors());
    last(list, interceptor);
    template.setInterceptors(list);
  }

  private static void last(List<ClientHttpRequestInterceptor> list, IdempotencyInterceptor ours) {
    boolean appHasItsOwn = list.stream().anyMatch(i -> i instanceof IdempotencyInterceptor && i != ours);
    list.removeIf(i -> i == ours);
    if (!appHasItsOwn) {
      list.add(ours);
    }
  }
}
