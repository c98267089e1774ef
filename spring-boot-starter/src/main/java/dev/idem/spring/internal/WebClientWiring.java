package dev.idem.spring.internal;

import dev.idem.core.IdempotentExecutor;
import dev.idem.spring.client.IdempotencyExchangeFilter;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.http.codec.ClientCodecConfigurer;
import org.springframework.http.codec.HttpMessageReader;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.ExchangeStrategies;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/** Puts Idem on the app's WebClient builders; loaded only when WebFlux is on the class path. */
public final class WebClientWiring {
  /** The name of Idem's own WebClient filter bean, which backs off for the app's. */
  public static final String EXCHANGE_FILTER = "idemExchangeFilter";

  private WebClientWiring() {}

  /**
   * The WebClient.Builder bean, wrapped so that a filter is last at each build: the app's own
   * filter bean if it declared one (as its own interceptor bean is the one on its RestClient
   * builders), else a filter made for this builder, which encodes bodies with the builder's own
   * codecs (as the app configured them). The filter (and the executor it needs) is made only when
   * that is safe, as {@link DeferredInterceptor} explains: until the context's singletons are
   * made, a client built gets a filter that makes it at its first request; that request fails
   * instead if the context has destroyed its beans by then ({@link BeansGone}).
   *
   * @param executor the executor, looked up when the filter is made
   * @param journalPool the journal pool, looked up when the filter is made
   * @param beans where the app's own filter bean is looked up
   * @param contextReady true once the context's singletons are made
   * @param gone set once the context destroys its beans: no lookup after
   */
  static Object webClientBuilder(Object bean, Supplier<IdempotentExecutor> executor,
      Supplier<Executor> journalPool, Consumer<IdempotencyExchangeFilter.Builder> settings, ListableBeanFactory beans,
      BooleanSupplier contextReady, BeansGone gone) {
    String appsOwn = appsOwnFilter(beans);
    CodecCapture codecs = appsOwn == null ? new CodecCapture() : null;
    SingletonSupplier<IdempotencyExchangeFilter> filter = SingletonSupplier.of(() -> gone.lookUp(() -> {
      if (appsOwn != null) {
        return beans.getBean(appsOwn, IdempotencyExchangeFilter.class);
      }
      IdempotencyExchangeFilter.Builder b = IdempotencyExchangeFilter.builder(executor.get())
          .journalPool(journalPool.get()).exchangeStrategies(codecs);
      settings.accept(b);
      return b.build();
    }));
    AtomicBoolean made = new AtomicBoolean();
    ExchangeFilterFunction deferred = new ExchangeFilterFunction() {
      @Override
      public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        IdempotencyExchangeFilter f;
        try {
          f = filter.obtain();
        } catch (IllegalStateException e) {
          return Mono.error(e); // the context closed first: the call fails as a call, not sent
        }
        made.set(true);
        return f.filter(request, next);
      }

      @Override
      public String toString() {
        return "Idem's filter (made at first use)";
      }
    };
    return LastInChain.wrap(WebClient.Builder.class, (WebClient.Builder) bean, x -> {
      WebClient.Builder builder = (WebClient.Builder) x;
      if (codecs != null) {
        builder.codecs(codecs);
      }
      builder.filters(list -> {
        if (list.stream().anyMatch(f -> f instanceof IdempotencyExchangeFilter)) {
          made.set(true); // the app put one there itself: if it is Idem's, it exists, and is moved last
        }
        // Not once the context destroyed its beans: a client built then fails at its request, not here.
        IdempotencyExchangeFilter ours =
            !gone.isSet() && (made.get() || contextReady.getAsBoolean()) ? filter.obtain() : null;
        if (ours != null) {
          made.set(true);
        }
        boolean appHasItsOwn =
            list.stream().anyMatch(f -> f instanceof IdempotencyExchangeFilter && f != ours);
        list.removeIf((ExchangeFilterFunction f) -> f == deferred || (ours != null && f == ours));
        if (!appHasItsOwn) {
          list.add(ours != null ? ours : deferred);
        }
      });
      return builder;
    });
  }

  /**
   * The name of the app's own {@link IdempotencyExchangeFilter} bean, if it declared exactly one:
   * Idem's own ({@link #EXCHANGE_FILTER}) backs off for it, and it replaces Idem's on the builders
   * too. Null if the app declared none, or more than one (then no one of them is its choice for
   * every builder). Only the name: the bean (and the executor it takes) is made later. Here, not in
   * the auto-configuration: a method there that names the filter's type fails that class's
   * introspection in an app without WebFlux.
   */
  private static String appsOwnFilter(ListableBeanFactory beans) {
    List<String> own = Arrays.stream(beans.getBeanNamesForType(IdempotencyExchangeFilter.class, false, false))
        .filter(name -> !name.equals(EXCHANGE_FILTER)).toList();
    return own.size() == 1 ? own.get(0) : null;
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
