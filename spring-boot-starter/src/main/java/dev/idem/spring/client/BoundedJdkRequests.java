package dev.idem.spring.client;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequest;
import org.springframework.http.client.JdkClientHttpRequestFactory;

/**
 * The requests of a resume transport the starter builds itself: through one JDK {@link HttpClient},
 * each with its own response timeout (Spring's {@link JdkClientHttpRequestFactory} takes one read
 * timeout per factory, so each attempt gets a factory of its own over the shared client; a factory
 * holds no connection, so that costs an object). Thread-safe.
 */
final class BoundedJdkRequests {
  private final HttpClient client;
  // What JdkClientHttpRequestFactory(HttpClient) would create for each factory (it writes a
  // streamed body); one shared, as the client is.
  private final SimpleAsyncTaskExecutor bodyWriter = new SimpleAsyncTaskExecutor("idem-resume-body-");

  BoundedJdkRequests(HttpClient client) {
    this.client = client;
  }

  /**
   * A request whose response (status, headers and body) must arrive within {@code timeout}, else
   * its exchange is cancelled and it fails with an {@link java.io.IOException}.
   */
  ClientHttpRequest create(URI uri, HttpMethod method, Duration timeout) throws IOException {
    JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(client, bodyWriter);
    factory.setReadTimeout(timeout);
    return factory.createRequest(uri, method);
  }
}
