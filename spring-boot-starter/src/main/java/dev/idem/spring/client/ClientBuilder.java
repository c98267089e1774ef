package dev.idem.spring.client;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.spi.adapter.AdapterSupport;
import java.util.Objects;

/**
 * The settings {@link IdempotencyInterceptor.Builder} and {@link IdempotencyExchangeFilter.Builder}
 * share; package-private, so its public setters show as each builder's own.
 *
 * @param <B> the builder, returned by every setter
 */
abstract class ClientBuilder<B extends ClientBuilder<B>> {
  private final IdempotentExecutor executor;
  private String keyHeader = AdapterSupport.DEFAULT_KEY_HEADER;
  private KeyHeaderFormat keyFormat = KeyHeaderFormat.BARE;
  private UntaggedPolicy untaggedPolicy = UntaggedPolicy.FRESH_KEY;
  private long maxBodyBytes = 1 << 20;

  ClientBuilder(IdempotentExecutor executor) {
    this.executor = Objects.requireNonNull(executor, "executor");
  }

  /**
   * The key header's name; default {@code Idempotency-Key}.
   *
   * @param name the header name
   * @return this builder
   * @throws IllegalArgumentException if it is not a valid header name
   */
  public B keyHeader(String name) {
    this.keyHeader = AdapterSupport.checkHeaderName(name);
    return self();
  }

  /**
   * How the key is written; default {@link KeyHeaderFormat#BARE}.
   *
   * @param format the format
   * @return this builder
   */
  public B keyFormat(KeyHeaderFormat format) {
    this.keyFormat = Objects.requireNonNull(format, "format");
    return self();
  }

  /**
   * What an untagged POST or PATCH gets; default {@link UntaggedPolicy#FRESH_KEY} (a key and
   * the journal, named {@code untagged-post} or {@code untagged-patch}). {@code REJECT} fails
   * such calls with {@link dev.idem.core.http.UntaggedRequestException} before anything is sent;
   * {@code PASS_THROUGH} sends them without a key and journals nothing.
   *
   * @param policy the policy
   * @return this builder
   */
  public B untaggedPolicy(UntaggedPolicy policy) {
    this.untaggedPolicy = Objects.requireNonNull(policy, "policy");
    return self();
  }

  /**
   * The largest request body a keyed call accepts; default 1 MiB. The body is held in memory and
   * journaled, so a bigger one is refused before anything is sent (the journal has its own cap).
   *
   * @param bytes the limit, 0 or more
   * @return this builder
   * @throws IllegalArgumentException if negative
   */
  public B maxBodyBytes(long bytes) {
    if (bytes < 0) {
      throw new IllegalArgumentException("maxBodyBytes must not be negative: " + bytes);
    }
    this.maxBodyBytes = bytes;
    return self();
  }

  /** The rules these settings make, for the adapter being built. */
  ClientSupport support() {
    return new ClientSupport(executor, keyHeader, keyFormat, untaggedPolicy, maxBodyBytes);
  }

  @SuppressWarnings("unchecked")
  private B self() {
    return (B) this;
  }
}
