package dev.idem.core;

import java.io.IOException;

/**
 * The base of every exception Idem throws on purpose. It is an {@link IOException} so that HTTP
 * adapters can rethrow it on the path where callers already handle I/O failures.
 *
 * <h2>Why checked, and why that is safe with a {@code catch (IOException)} retry wrapper</h2>
 * The hierarchy stays checked, in core and in the adapters alike. OkHttp's {@code Interceptor} and
 * {@code Callback} can only carry an {@code IOException} (a RuntimeException thrown from an
 * interceptor on {@code enqueue} reaches the callback only as a generic "canceled" and is rethrown
 * on the dispatcher thread), so an unchecked core would be translated back into IOExceptions at
 * that boundary anyway, and users would meet two hierarchies for one failure.
 *
 * <p>The risk this raises is an app's generic {@code catch (IOException)} retry loop around an Idem
 * call, which will catch {@link OperationUncertainException} too. A type cannot prevent that (an
 * unchecked one is caught by {@code catch (Exception)} just the same); the key does. Retrying the
 * same operation (the same {@link Operation}, OkHttp tag or {@code OperationCall}) or a new one for
 * the same business reference ({@link Operation#forReference}) sends the same key: the journal
 * answers UNCERTAIN again without sending anything, and after a restart with an empty journal the
 * server answers with its stored result. Only a retry that builds a new operation with a fresh
 * random key can run the effect twice; that is why operations are built once per logical operation,
 * or derived from a reference. {@link OperationException#operationId()} carries the key for
 * reconciling or re-driving.
 */
public class IdempotencyException extends IOException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception with a message and the failure behind it.
   *
   * @param message what happened, free of secrets and request bodies
   * @param cause the underlying failure, or null
   */
  public IdempotencyException(String message, Throwable cause) {
    super(message, cause);
  }
}
