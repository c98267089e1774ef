package dev.idem.okhttp.internal;

import dev.idem.core.UntaggedPolicy;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.KeyHeaderFormat;
import java.util.Objects;

/**
 * What the interceptor and the resume transports share: the executor, and how the key is written.
 *
 * @param executor runs every operation
 * @param headerName the key header, such as {@code Idempotency-Key}
 * @param format how the key is written into it
 * @param untagged what happens to an untagged POST or PATCH
 */
public record AdapterSettings(IdempotentExecutor executor, String headerName, KeyHeaderFormat format,
    UntaggedPolicy untagged) {
  public AdapterSettings {
    Objects.requireNonNull(executor, "executor");
    Objects.requireNonNull(headerName, "headerName");
    Objects.requireNonNull(format, "format");
    Objects.requireNonNull(untagged, "untagged");
  }

  /** The header value for a key. */
  public String headerValue(IdempotencyKey key) {
    return format.format(key);
  }
}
