package dev.idem.spring.internal;

import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.servlet.WebhookServlet;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The starter's webhook endpoints: one {@link WebhookServlet} per source, keyed by its path, and a
 * filter that serves those paths itself. The filter runs ahead of the app's filters, so it reads the
 * raw body before one of them can parse a form-encoded body as parameters (which consumes it), and
 * it answers without passing the request on. The servlets stay mapped on the paths: the container
 * then routes a request for a path to a chain that holds the filter even in an app without a
 * catch-all servlet, and another servlet on a source's path is found at startup. Thread-safe.
 */
public final class WebhookEndpoints {
  /**
   * One source's endpoint.
   *
   * @param path its exact servlet path
   * @param source the source's name
   * @param servlet the servlet that serves it
   */
  public record Endpoint(String path, String source, WebhookServlet servlet) {}

  private final Map<String, Endpoint> byPath;
  private final Filter filter = new Served();

  /**
   * @param receivers the receiver of each path; the paths are distinct, exact servlet paths
   */
  public WebhookEndpoints(Map<String, WebhookReceiver> receivers) {
    Map<String, Endpoint> m = new LinkedHashMap<>();
    receivers.forEach((path, r) -> m.put(path, new Endpoint(path, r.source().name(), new WebhookServlet(r))));
    this.byPath = Collections.unmodifiableMap(m);
  }

  /** @return the endpoints, in the order the sources were given */
  public Collection<Endpoint> endpoints() {
    return byPath.values();
  }

  /** @return the endpoints' paths */
  public Set<String> paths() {
    return byPath.keySet();
  }

  /** @return the filter that serves the paths; register it on them, for REQUEST dispatches */
  public Filter filter() {
    return filter;
  }

  /** Serves a webhook path with its servlet, here, instead of down the chain. */
  private final class Served implements Filter {
    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
        throws IOException, ServletException {
      Endpoint endpoint = request instanceof HttpServletRequest http && response instanceof HttpServletResponse
          ? byPath.get(pathWithinApplication(http)) : null;
      if (endpoint == null) {
        chain.doFilter(request, response);
        return;
      }
      endpoint.servlet().service(request, response);
    }
  }

  /**
   * The decoded, normalised path the container matched the filter's patterns against: servlet path
   * plus path info (the raw request URI could still hold {@code ;jsessionid}, {@code %2F} or
   * {@code //}).
   */
  private static String pathWithinApplication(HttpServletRequest request) {
    String info = request.getPathInfo();
    return info == null ? request.getServletPath() : request.getServletPath() + info;
  }
}
