package dev.idem.core.spi.adapter;

import dev.idem.core.Classification;
import dev.idem.core.Classifier;
import java.io.IOException;
import java.util.Objects;
import javax.net.ssl.SSLHandshakeException;

/**
 * A transport failure that comes after the request may already have gone out, told as such. Idem's
 * default table ({@link Classifier#defaults()}) calls a failure not sent by the type of an exception
 * in its cause chain: a refused connect, an unknown host, no route, a connect timeout, a failed TLS
 * handshake. Each comes from making a connection, and a client can make one after a request head
 * already went out on another (OkHttp following a 303, the JDK sending a GET again on a new
 * connection, an interceptor that proceeds twice): that failure then says nothing of the request
 * that went out first. An adapter that knows the request may have gone out hands such a failure on
 * through {@link #hidden}, so that the table records the attempt ambiguous.
 *
 * <p>A failed TLS handshake after the head, on the connection that carried it, is another matter:
 * TLS 1.3 lets a client finish its handshake before the server judges the client's certificate, so
 * a client writes the head and the server's refusal (mutual TLS with a missing or untrusted
 * certificate) comes after; the server's application never had the request. Adapters tell the two
 * apart by {@link #handshakeFailed} and what they know of the connections.
 *
 * <p>Stateless and thread-safe.
 */
public final class SentBefore {
  private static final Classifier DEFAULT_TABLE = Classifier.defaults();

  private SentBefore() {}

  /**
   * Whether Idem's default table calls {@code failure} not sent (SAFE) by its type.
   *
   * @param failure a transport's failure
   * @return true for a refused connect, an unknown host, no route, a connect timeout or a failed TLS
   *     handshake anywhere in its cause chain, or an explicit not-sent
   * @throws NullPointerException if failure is null
   */
  public static boolean typedNotSent(IOException failure) {
    Objects.requireNonNull(failure, "failure");
    return DEFAULT_TABLE.classify(failure).map(v -> v.classification() == Classification.SAFE).orElse(false);
  }

  /**
   * Whether {@code failure}'s cause chain (up to 16 deep) holds an {@code SSLHandshakeException}.
   *
   * @param failure any throwable, or null (false)
   * @return whether a TLS handshake failed
   */
  public static boolean handshakeFailed(Throwable failure) {
    Throwable t = failure;
    for (int depth = 0; t != null && depth < 16; t = t.getCause(), depth++) {
      if (t instanceof SSLHandshakeException) {
        return true;
      }
    }
    return false;
  }

  /**
   * {@code failure} as an IOException whose type says nothing of "not sent": a new exception with
   * {@code why} and the failure's class and message in its message, and the failure itself as a
   * suppressed exception (not its cause, which the table would read).
   *
   * @param failure the failure that came after the request may have gone out
   * @param why why it may have, for the message
   * @return the new exception
   * @throws NullPointerException if an argument is null
   */
  public static IOException hidden(IOException failure, String why) {
    Objects.requireNonNull(why, "why");
    IOException maybeSent = new IOException("the HTTP client failed with " + failure.getClass().getSimpleName()
        + " (" + failure.getMessage() + "), but the request may have been sent before: " + why);
    maybeSent.addSuppressed(failure);
    return maybeSent;
  }
}
