package dev.idem.httpclient.internal;

import java.net.http.HttpRequest;
import java.util.Locale;

/**
 * When the JDK client sends an exchange again by itself, on a new connection, after its head went
 * out on a reused connection that turned out closed (its {@code MultiExchange} retry on a
 * {@code ConnectionExpiredException}, JDK 11 to 25): a GET or a HEAD, and any method when the
 * {@code jdk.httpclient.enableAllMethodRetry} system property is set (empty or {@code true}, as
 * the JDK reads it). A failure of that second exchange is all the caller sees, so its type (a
 * refused connect) says nothing of the first.
 */
final class JdkRetries {
  private JdkRetries() {}

  /** Whether the JDK may have written {@code attempt}'s head once already when its last exchange failed. */
  static boolean mayRetryOnNewConnection(HttpRequest attempt) {
    String method = attempt.method().toUpperCase(Locale.ROOT);
    return method.equals("GET") || method.equals("HEAD") || allMethodsRetried();
  }

  private static boolean allMethodsRetried() {
    String value;
    try {
      value = System.getProperty("jdk.httpclient.enableAllMethodRetry");
    } catch (SecurityException e) {
      return true;  // cannot tell: assume the JDK may retry
    }
    return value != null && (value.isEmpty() || Boolean.parseBoolean(value));
  }
}
