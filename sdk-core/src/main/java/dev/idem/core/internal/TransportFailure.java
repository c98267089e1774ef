package dev.idem.core.internal;

import java.io.IOException;

/**
 * A RuntimeException a transport threw, turned into a failed attempt. Ambiguous unless the transport
 * said otherwise (it throws {@link dev.idem.core.spi.RequestNotSentException} when it knows nothing was
 * written): the exception may have come after the request went out, for example from OkHttp's own
 * retry interceptor parsing a response's {@code Retry-After}. Its message names the exception's
 * class but not its message, because the message is journaled and a client library's message may
 * quote a header value; the cause keeps the whole exception for the caller.
 */
public final class TransportFailure extends IOException {
  private static final long serialVersionUID = 1L;

  /**
   * @param cause what the transport threw
   */
  public TransportFailure(RuntimeException cause) {
    super("the transport threw " + cause.getClass().getName(), cause);
  }
}
