package dev.idem.storage;

import dev.idem.core.spi.RequestSnapshot;

/**
 * A JDBC URL as a store's name, a message or a log line may show it. Drivers report the URL as it
 * was configured ({@code DatabaseMetaData.getURL()}), and a URL is a documented place for the
 * credentials: pgjdbc's and Connector/J's {@code ?user=app&password=...}, a user info
 * {@code //app:pw@host}, SQL Server's and H2's {@code ;password=...}. A store's name reaches its
 * {@code toString()}, every {@link StoreErrors} message and the health details, all of which apps
 * log, so the name is made from this once, where the URL is read.
 *
 * <p>Pure and thread-safe.
 */
public final class JdbcUrls {
  private JdbcUrls() {}

  /**
   * {@code url} with its user info, the value of every query parameter the secret rule names
   * ({@link RequestSnapshot#redactedUrl}: {@code password}, {@code sslpassword}, {@code sslkey}...)
   * and the value of every {@code ;NAME=value} setting whose name the rule names
   * ({@link RequestSnapshot#isSecretByDefault}: {@code ;password=}, {@code ;PASSWORD=}) replaced by
   * {@code redacted}; everything else (host, port, database, file path) as written.
   *
   * @param url a JDBC URL, or null (a driver that reports none)
   * @return the URL as it may be shown, or null for null
   */
  public static String shown(String url) {
    if (url == null) {
      return null;
    }
    // The URL walk reads user info and the query; a ';' setting is a path parameter to it, judged
    // only by exact names, so the JDBC-style settings are read here by the wider header rule.
    String redacted = RequestSnapshot.redactedUrl(url);
    return redacted.indexOf(';') < 0 ? redacted : semicolonSettings(redacted);
  }

  /** {@code url} with the value of every {@code ;NAME=value} the secret rule names redacted. */
  private static String semicolonSettings(String url) {
    StringBuilder out = new StringBuilder(url.length());
    int semi = url.indexOf(';');
    out.append(url, 0, semi < 0 ? url.length() : semi);
    while (semi >= 0) {
      int next = url.indexOf(';', semi + 1);
      int end = next < 0 ? url.length() : next;
      int eq = url.indexOf('=', semi + 1);
      if (eq > semi + 1 && eq < end && RequestSnapshot.isSecretByDefault(url.substring(semi + 1, eq).trim())) {
        out.append(url, semi, eq + 1).append("redacted");
      } else {
        out.append(url, semi, end);
      }
      semi = next;
    }
    return out.toString();
  }
}
