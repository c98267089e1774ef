package dev.idem.webhooks;

import java.util.Map;

/**
 * What to answer the sender.
 *
 * @param status the HTTP status: 200 for accepted, duplicate and replay; 400 header or timestamp;
 *     401 signature; 405 not a POST; 413 too large; 503 the inbox could not store it (retry)
 * @param body a short JSON object such as {@code {"status":"accepted"}}; never echoes the request
 * @param headers extra response headers, such as {@code Retry-After} with 503, {@code Allow} with
 *     405, or {@code Connection: close} with a 413 that left the body's rest unread on the connection
 */
public record WebhookResponse(int status, String body, Map<String, String> headers) {
  /** The content type of every body. */
  public static final String CONTENT_TYPE = "application/json";

  /**
   * Copies {@code headers}, so that the response cannot change after it is made.
   *
   * @param status the HTTP status
   * @param body the JSON body
   * @param headers extra response headers
   * @throws NullPointerException if {@code headers}, or a name or value in it, is null
   */
  public WebhookResponse {
    headers = Map.copyOf(headers);
  }

  /** {@return true for 2xx} */
  public boolean isSuccess() {
    return status >= 200 && status < 300;
  }
}
