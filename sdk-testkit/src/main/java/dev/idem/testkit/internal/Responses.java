package dev.idem.testkit.internal;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.idem.testkit.Reply;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import mockwebserver3.MockResponse;
import okio.Buffer;

/** Turns replies into MockWebServer responses, and builds the server's own error replies. */
public final class Responses {
  // MockResponse.Builder.code() writes generic reasons ("Client Error"); a reason phrase that
  // names the status makes logs and failed assertions easier to read. Clients must ignore it.
  private static final Map<Integer, String> REASONS = Map.ofEntries(
      Map.entry(200, "OK"),
      Map.entry(201, "Created"),
      Map.entry(202, "Accepted"),
      Map.entry(204, "No Content"),
      Map.entry(301, "Moved Permanently"),
      Map.entry(302, "Found"),
      Map.entry(303, "See Other"),
      Map.entry(307, "Temporary Redirect"),
      Map.entry(308, "Permanent Redirect"),
      Map.entry(401, "Unauthorized"),
      Map.entry(400, "Bad Request"),
      Map.entry(402, "Payment Required"),
      Map.entry(404, "Not Found"),
      Map.entry(408, "Request Timeout"),
      Map.entry(409, "Conflict"),
      Map.entry(413, "Content Too Large"),
      Map.entry(417, "Expectation Failed"),
      Map.entry(422, "Unprocessable Content"),
      Map.entry(425, "Too Early"),
      Map.entry(429, "Too Many Requests"),
      Map.entry(500, "Internal Server Error"),
      Map.entry(502, "Bad Gateway"),
      Map.entry(503, "Service Unavailable"),
      Map.entry(504, "Gateway Timeout"));

  private Responses() {}

  /** A response with this status and a reason phrase that names it, no headers or body yet. */
  public static MockResponse.Builder status(int status) {
    return new MockResponse.Builder().status("HTTP/1.1 " + status + " " + REASONS.getOrDefault(status, "Status"));
  }

  /** A response that carries {@code reply} as it is. */
  public static MockResponse.Builder of(Reply reply) {
    MockResponse.Builder b = status(reply.status());
    reply.contentType().ifPresent(ct -> b.setHeader("Content-Type", ct));
    reply.headers().forEach((name, values) -> values.forEach(v -> b.addHeader(name, v)));
    return b.body(new Buffer().write(reply.body()));
  }

  /**
   * An RFC 9457 problem document, the error format the IETF idempotency draft uses.
   *
   * @param status the HTTP status
   * @param type a URI naming the kind of problem, stable for clients to match on
   * @param title a short human summary
   * @param detail a human explanation of this occurrence
   */
  public static Reply problem(int status, String type, String title, String detail) {
    String json = JsonNodeFactory.instance.objectNode().put("type", type).put("title", title).put("status", status)
        .put("detail", detail).toString();
    return Reply.of(status, "application/problem+json", json.getBytes(StandardCharsets.UTF_8));
  }
}
