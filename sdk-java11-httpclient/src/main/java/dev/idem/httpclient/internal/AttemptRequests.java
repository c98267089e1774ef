package dev.idem.httpclient.internal;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Builds the {@link HttpRequest} of one attempt: the captured bytes as a fresh
 * {@code BodyPublishers.ofByteArray}, the caller's headers, and the key header set exactly once.
 * java.net.http requests are immutable and their publishers may be one-shot, so each attempt gets
 * a request of its own built from the snapshot rather than the caller's request.
 */
public final class AttemptRequests {
  /**
   * Headers the JDK client refuses from callers (it computes them itself) unless a system property
   * allows them; a snapshot journaled by another adapter may still carry them, so they are dropped.
   */
  private static final Set<String> RESTRICTED = Set.of("connection", "content-length", "expect", "host", "upgrade");

  private AttemptRequests() {}

  /**
   * Request settings that are not part of a snapshot, taken from the caller's request for a live
   * call, or from the resume transport's configuration after a restart.
   *
   * @param timeout the per-attempt response timeout, if any
   * @param version the HTTP version, if the caller pinned one
   * @param expectContinue whether to send {@code Expect: 100-continue}
   */
  public record Settings(Optional<Duration> timeout, Optional<HttpClient.Version> version, boolean expectContinue) {
    /** The settings of the caller's request. */
    public static Settings of(HttpRequest request) {
      return new Settings(request.timeout(), request.version(), request.expectContinue());
    }
  }

  /**
   * Builds one attempt.
   *
   * @param headers the headers to send, secrets included; any value of the key header is replaced
   * @param keyHeader the key header's name
   * @param keyValue the formatted key
   */
  public static HttpRequest build(String method, URI uri, Map<String, List<String>> headers, byte[] body,
      Settings settings, String keyHeader, String keyValue) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri)
        .method(method, body.length == 0
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofByteArray(body))
        .expectContinue(settings.expectContinue());
    settings.timeout().ifPresent(b::timeout);
    settings.version().ifPresent(b::version);
    headers.forEach((name, values) -> {
      String lower = name.toLowerCase(Locale.ROOT);
      if (!RESTRICTED.contains(lower) && !lower.equalsIgnoreCase(keyHeader)) {
        values.forEach(v -> b.header(name, v));
      }
    });
    b.header(keyHeader, keyValue);
    return b.build();
  }
}
