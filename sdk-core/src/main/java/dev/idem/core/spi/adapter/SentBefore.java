package dev.idem.core.spi.adapter;

import dev.idem.core.Classification;
import dev.idem.core.Classifier;
import java.io.IOException;
import java.util.Objects;

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
 * <p>A failed TLS handshake after the head can also come from the connection that carried it: a
 * mutual-TLS server refusing the client's certificate after a TLS 1.3 client finished its side
 * (the server's application never had the request), but also a TLS 1.2 server renegotiating for a
 * client certificate after its application read the request. A client cannot tell them apart, so
 * it is hidden too.
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
