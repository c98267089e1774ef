package dev.idem.core.http;

import dev.idem.core.IdempotencyException;

/**
 * A POST or PATCH that the app did not mark as a logical operation was refused under
 * {@link UntaggedPolicy#REJECT}. Nothing was journaled or sent. Every HTTP adapter throws this
 * type (the OkHttp adapter from {@code execute} and to the {@code enqueue} callback,
 * java.net.http from {@code send} and as the failure of {@code sendAsync}'s future), so one
 * {@code catch} covers both. It is an {@link IdempotencyException}, and so an IOException, because
 * OkHttp reports only IOExceptions to an asynchronous call's callback.
 */
public class UntaggedRequestException extends IdempotencyException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message which request, and how to mark it; free of secrets and bodies
   */
  public UntaggedRequestException(String message) {
    super(message, null);
  }
}
