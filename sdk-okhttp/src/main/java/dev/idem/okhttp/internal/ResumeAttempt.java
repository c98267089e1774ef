package dev.idem.okhttp.internal;

/**
 * A request tag that marks one attempt of an operation that is already journaled and being driven
 * by the executor (a resume after restart). The interceptor passes such requests straight down the
 * chain: they already carry their key, and treating them as a new operation would journal them a
 * second time (or, for an untagged POST under FRESH_KEY, under another key).
 */
public enum ResumeAttempt {
  INSTANCE
}
