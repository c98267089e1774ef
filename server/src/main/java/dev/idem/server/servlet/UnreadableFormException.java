package dev.idem.server.servlet;

import java.io.IOException;

/**
 * Thrown by the body reader of {@link IdempotencyFilter#guardRequest} when a keyed request's form
 * body cannot be given to the handler, or fingerprinted, as the container would: it holds more
 * pairs than {@link IdempotencyFilter#MAX_FORM_PAIRS} (the container's own limit, which the guard
 * bypasses by reading the body), or it was consumed before the guard and the container reported
 * that it could not decode part of it, so its parameters no longer tell it apart from another form.
 * {@link IdempotencyFilter} answers it 400 with {@link #getMessage()} as the reason, as the
 * container answers such a form, before anything is claimed; a servlet that calls the guard itself
 * should do the same.
 */
public final class UnreadableFormException extends IOException {
  private static final long serialVersionUID = 1L;

  UnreadableFormException(String reason) {
    super(reason);
  }
}
