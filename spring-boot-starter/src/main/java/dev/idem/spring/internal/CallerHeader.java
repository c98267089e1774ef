package dev.idem.spring.internal;

import dev.idem.core.spi.RequestSnapshot;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Enumeration;
import java.util.Objects;
import java.util.function.Function;

/**
 * The guard's caller read from one request header ({@code idem.server.caller-header}), refused
 * when that header is not exactly one value. A gateway that appends its own value (Spring Cloud
 * Gateway's {@code AddRequestHeader}, Envoy's default {@code append}) leaves a client's value
 * first: read with {@code getHeader}, the client would name the tenant, and be replayed that
 * tenant's answers. So a second field line, or a comma (two values a proxy joined), makes the
 * caller unknown, as the guard treats a doubled {@code Idempotency-Key}. A header the secret rule
 * names a credential is refused as the caller header: the caller is stored in clear. Thread-safe
 * (stateless).
 */
public final class CallerHeader implements Function<HttpServletRequest, String> {
  private final String name;

  /**
   * @param name the header's name
   * @throws NullPointerException if name is null
   * @throws IllegalArgumentException if the secret rule names the header a credential
   *     ({@link RequestSnapshot#isSecretByDefault}: {@code X-Api-Key}, {@code Authorization},
   *     {@code Cookie}...)
   */
  public CallerHeader(String name) {
    this.name = Objects.requireNonNull(name, "name");
    // The caller is stored as given in every guard record (the caller column, `idem guard list`,
    // a Claim in a log line): scoping keys by an API key this way would keep the key in clear.
    if (RequestSnapshot.isSecretByDefault(name)) {
      throw new IllegalArgumentException("idem.server.caller-header is " + name + ", a header Idem's secret rule"
          + " names a credential: its value would be stored in clear as the caller of every guard record, and"
          + " shown by `idem guard list` and in logs. Name a header that holds an account or tenant id, or"
          + " declare an IdempotencyCaller bean that maps the credential to its tenant (docs/spring.md)");
    }
  }

  /**
   * @return what this caller is, for the refusal's text and the logs
   */
  public String description() {
    return "the " + name + " header";
  }

  /**
   * Why this request's caller cannot be told, or null if it can (one value, or none).
   *
   * @param request the request
   * @return the reason, naming the header but never its values, or null
   */
  String refusal(HttpServletRequest request) {
    Enumeration<String> values = request.getHeaders(name);
    if (values == null || !values.hasMoreElements()) {
      return null;
    }
    String first = values.nextElement();
    if (values.hasMoreElements()) {
      return "the caller header " + name + " was given more than once";
    }
    if (first != null && first.indexOf(',') >= 0) {
      return "the caller header " + name + " holds a comma, as two values a proxy joined do";
    }
    return null;
  }

  /**
   * @param request the request
   * @return the header's only value, or null without one (a request with two is refused first,
   *     see {@link GuardFilter})
   */
  @Override
  public String apply(HttpServletRequest request) {
    return refusal(request) == null ? request.getHeader(name) : null;
  }
}
