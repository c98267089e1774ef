package dev.idem.testkit.internal;

import okhttp3.Headers;

/**
 * The one check of a response header field the test kit's server will write, shared by
 * {@code Fault.withHeader} and {@code Reply}.
 */
public final class HeaderFields {
  private HeaderFields() {}

  /**
   * Refuses a header field the server could not write.
   *
   * <p>OkHttp's own rule (a non-empty token name; a value of tab or printable ASCII), the one
   * MockWebServer applies while it writes: checking it where the reply or fault is built tells the
   * test author at their line, instead of the client under test timing out after the effect ran.
   *
   * @param name the header name
   * @param value the value
   * @throws IllegalArgumentException naming the header, if the field could not be sent
   */
  public static void requireSendable(String name, String value) {
    try {
      new Headers.Builder().add(name, value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("the header \"" + name + "\" cannot be sent: " + e.getMessage(), e);
    }
  }
}
