package dev.idem.core.spi.adapter;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.UntaggedPolicy;
import java.util.Objects;

/**
 * The settings every HTTP adapter's builder takes, the same way: the key header's name and format,
 * the untagged policy and the request body cap. An adapter's builder extends it and makes its
 * {@link AdapterSupport} with {@link #support}. Not thread-safe, as builders are.
 *
 * @param <B> the adapter's builder, which every setter returns
 */
public abstract class AdapterBuilder<B extends AdapterBuilder<B>> {
  private String keyHeader = AdapterSupport.DEFAULT_KEY_HEADER;
  private KeyHeaderFormat keyFormat = KeyHeaderFormat.BARE;
  private UntaggedPolicy untaggedPolicy;
  private long maxBodyBytes = 1 << 20;

  /**
   * Starts the settings with their defaults.
   *
   * @param untaggedPolicy the adapter's default untagged policy
   */
  protected AdapterBuilder(UntaggedPolicy untaggedPolicy) {
    this.untaggedPolicy = Objects.requireNonNull(untaggedPolicy, "untaggedPolicy");
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
   * What an untagged POST or PATCH (one the app did not name as an operation) gets; the default is
   * the adapter's, given in its builder's description. {@code FRESH_KEY}: a key and the journal,
   * as operation {@code untagged-post} or {@code untagged-patch}, and a key header already on the
   * request is its key. {@code REJECT}: it fails with
   * {@link dev.idem.core.http.UntaggedRequestException} before anything is sent.
   * {@code PASS_THROUGH}: it goes out without a key and nothing is journaled.
   *
   * @param policy the policy
   * @return this builder
   */
  public B untaggedPolicy(UntaggedPolicy policy) {
    this.untaggedPolicy = Objects.requireNonNull(policy, "policy");
    return self();
  }

  /**
   * The largest request body a keyed call accepts, in bytes; default 1 MiB. The whole body is held
   * in memory and journaled, so a bigger one is refused before anything is sent (the journal has
   * its own cap).
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

  /**
   * The adapter rules these settings make.
   *
   * @param executor the executor the adapter runs its operations on
   * @return the rules
   */
  protected AdapterSupport support(IdempotentExecutor executor) {
    return AdapterSupport.of(executor, keyHeader, keyFormat, untaggedPolicy);
  }

  /**
   * The body cap set.
   *
   * @return bytes, 0 or more
   */
  protected long bodyCap() {
    return maxBodyBytes;
  }

  @SuppressWarnings("unchecked")
  private B self() {
    return (B) this;
  }
}
