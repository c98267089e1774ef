package dev.idem.okhttp.internal;

import java.io.IOException;

/**
 * OkHttp was about to send a second request for one keyed attempt (a follow-up of its own, such as
 * a retry or a redirect Idem does not know about), and {@link FollowUpGuard} stopped it before it
 * reached the network. The attempt's first request did go out, so the attempt counts as ambiguous:
 * Idem retries it, as a journaled attempt with the same key. Unless that first request was
 * answered with a status that proves no effect (a 401 before a token refresh): then the attempt
 * counts as not acted on ({@link FollowUps#answeredWithoutEffect}) and is retried all the same.
 */
public final class FollowUpRefusedException extends IOException {
  private static final long serialVersionUID = 1L;

  FollowUpRefusedException(String message) {
    super(message);
  }
}
