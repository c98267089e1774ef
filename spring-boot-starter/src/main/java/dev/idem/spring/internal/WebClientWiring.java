package dev.idem.spring.internal;

import dev.idem.core.IdempotentExecutor;
import dev.idem.spring.client.IdempotencyExchangeFilter;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.springframework.http.codec.ClientCodecConfigurer;
import org.springframework.http.codec.HttpMessageReader;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeStrategies;
import org.springframework.web.reactive.function.client.WebClient;

/** Puts Idem on the app's WebClient builders; loaded only when WebFlux is on the class path. */
public final class WebClientWiring {
  private WebClientWiring() {}

  /**
   * The WebClient.Builder bean, wrapped so that a filter is last at each build: the app's own
   * filter bean if it declared one (as its own interceptor bean is the one on its RestClient
   * builders), else a filter made for this builder, which encodes bodies with the builder's own
   * codecs (as the app configured them).
   *
   * @param appsOwn the app's own filter bean, or null
   */
  public static Object webClientBuilder(Object bean, IdempotentExecutor executor, Executor journalPool,
      Consumer<IdempotencyExchangeFilter.Builder> settings, IdempotencyExchangeFilter appsOwn) {
    CodecCapture codecs = appsOwn == null ? new CodecCapture() : null;
    IdempotencyExchangeFilter filter;
    if (appsOwn != null) {
      filter = appsOwn;
    } else {
      IdempotencyExchangeFilter.Builder b = IdempotencyExchangeFilter.builder(executor).journalPool(journalPool)
          .exchangeStrategies(codecs);
      settings.accept(b);
      filter = b.build();
    }
    return LastInChain.wrap(WebClient.Builder.class, (WebClient.Builder) bean, x -> {
      WebClient.Builder builder = (WebClient.Builder) x;
      if (codecs != null) {
        builder.codecs(codecs);
      }
      builder.filters(list -> {
        boolean appHasItsOwn = list.stream().anyMatch(f -> f instanceof IdempotencyExchangeFilter && f != filter);
        list.removeIf((ExchangeFilterFunction f) -> f == filter);
        if (!appHasItsOwn) {
          list.add(filter);
        }
      });
      return builder;
    });
  }

  /**
   * The codecs a WebClient.Builder was built with: the configurer its build hands to every
   * {@code codecs(...)} consumer is the one its strategies come from, so reading its readers and
   * writers later gives what the client uses.
   */
  static final class CodecCapture implements Consumer<ClientCodecConfigurer>, ExchangeStrategies {
    private final AtomicReference<ClientCodecConfigurer> configurer = new AtomicReference<>();

    /** The strategies read from the configurer, once a request needs them (the client is built by then). */
    private final AtomicReference<ExchangeStrategies> read = new AtomicReference<>();

    @Override
    public void accept(ClientCodecConfigurer c) {
      configurer.set(c);
      read.set(null); // built again: read afresh
    }

    private ExchangeStrategies strategies() {
      ExchangeStrategies s = read.get();
      if (s == null) {
        ClientCodecConfigurer c = configurer.get();
        if (c == null) {
          return ExchangeStrategies.withDefaults();
        }
        List<HttpMessageReader<?>> readers = List.copyOf(c.getReaders());
        List<HttpMessageWriter<?>> writers = List.copyOf(c.getWriters());
        s = new ExchangeStrategies() {
          @Override
          public List<HttpMessageReader<?>> messageReaders() {
            return readers;
          }

          @Override
          public List<HttpMessageWriter<?>> messageWriters() {
            return writers;
          }
        };
        read.compareAndSet(null, s);
      }
      return s;
    }

    @Override
    public List<HttpMessageReader<?>> messageReaders() {
      return strategies().messageReaders();
    }

    @Override
    public List<HttpMessageWriter<?>> messageWriters() {
      return strategies().messageWriters();
    }
  }
}
