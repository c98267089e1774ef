package dev.idem.spring.internal;

import dev.idem.spring.client.IdempotencyInterceptor;
import java.io.IOException;
import java.util.function.BooleanSupplier;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * Idem's interceptor bean as the app's clients get it, looked up only when it is safe to: the
 * interceptor needs the executor, which needs every {@code IdemListener} bean, and a listener may
 * itself take a {@code RestClient.Builder} (or a {@code RestTemplate}) and build its client while
 * the executor is being made. Until the context's singletons are made, a chain gets this object,
 * which looks the bean up at its first request; after, and once looked up, the bean itself. A
 * first request after the context destroyed its beans fails ({@link BeansGone}) rather than make
 * them again. Thread-safe.
 */
public final class DeferredInterceptor implements ClientHttpRequestInterceptor {
  private final ObjectProvider<IdempotencyInterceptor> bean;
  private final BooleanSupplier contextReady;
  private final BeansGone gone;
  private volatile IdempotencyInterceptor resolved;

  /**
   * @param bean the interceptor bean (the app's own if it declared one)
   * @param contextReady true once the context's singletons are made: the bean can be looked up
   *     then without making the executor in the middle of its own creation
   * @param gone set once the context destroys its beans: no lookup after
   */
  DeferredInterceptor(ObjectProvider<IdempotencyInterceptor> bean, BooleanSupplier contextReady, BeansGone gone) {
    this.bean = bean;
    this.contextReady = contextReady;
    this.gone = gone;
  }

  /**
   * The interceptor bean, looked up now if it was not yet.
   *
   * @throws IllegalStateException if it was not, and the context has destroyed its beans
   */
  IdempotencyInterceptor get() {
    IdempotencyInterceptor i = resolved;
    if (i == null) {
      synchronized (this) {
        i = resolved;
        if (i == null) {
          i = gone.lookUp(bean::getObject);
          resolved = i;
        }
      }
    }
    return i;
  }

  /** What to put in a chain now: the bean once it can be looked up safely, else this. */
  ClientHttpRequestInterceptor forChain() {
    return resolved != null || (contextReady.getAsBoolean() && !gone.isSet()) ? get() : this;
  }

  /** Whether the bean can be had without a lookup the closed context refuses. */
  boolean canGet() {
    return resolved != null || !gone.isSet();
  }

  /** Whether {@code i} is Idem's: this, or the bean it looked up. */
  boolean isIdems(ClientHttpRequestInterceptor i) {
    return i == this || (i != null && i == resolved);
  }

  @Override
  public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
      throws IOException {
    return get().intercept(request, body, execution);
  }

  @Override
  public String toString() {
    return "Idem's interceptor (looked up at first use)";
  }
}
