package dev.idem.webhooks.servlet;

import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookResponse;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Serves a {@link WebhookReceiver} in any Jakarta Servlet 6 container:
 *
 * <pre>{@code
 * context.addServlet(new ServletHolder(new WebhookServlet(receiver)), "/webhooks/stripe");
 * }</pre>
 *
 * <p>It reads the raw input stream itself (never request parameters, which would parse the body)
 * up to the source's cap; a delivery over the cap is answered 413 with the receiver's
 * {@code Connection: close}, since its rest stays unread. Register it where no filter reads or
 * wraps the body first. Thread-safe.
 */
public final class WebhookServlet extends HttpServlet {
  private final transient WebhookReceiver receiver;

  /**
   * Creates a servlet that serves the receiver's endpoint.
   *
   * @param receiver the endpoint to serve
   */
  public WebhookServlet(WebhookReceiver receiver) {
    this.receiver = Objects.requireNonNull(receiver, "receiver");
  }

  /**
   * Handles every method: the receiver answers 405 to all but POST.
   *
   * @param req the request
   * @param resp the response
   * @throws IOException if reading or writing fails
   */
  @Override
  protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    for (String name : Collections.list(req.getHeaderNames())) {
      headers.put(name, Collections.list(req.getHeaders(name)));
    }
    WebhookResponse r = receiver.handle(req.getMethod(), headers, req.getInputStream());
    byte[] body = r.body().getBytes(StandardCharsets.UTF_8);
    resp.setStatus(r.status());
    resp.setContentType(WebhookResponse.CONTENT_TYPE);
    r.headers().forEach(resp::setHeader);
    resp.setContentLength(body.length);
    resp.getOutputStream().write(body);
  }
}
