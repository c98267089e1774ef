package dev.idem.spring.internal;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.util.List;
import java.util.Objects;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.StreamingHttpOutputMessage;
import org.springframework.http.client.AbstractClientHttpRequest;
import org.springframework.http.client.ClientHttpRequest;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.http.client.ClientHttpResponse;

/**
 * A request of {@link KeyedRedirects#routing}: it becomes a request of one of two factories only
 * when its body is asked for or it is sent, since only then are its headers (the key header among
 * them) all set. The body then goes straight to that request, never through a copy of its own:
 * an unkeyed upload of any size must cost the app no more memory than its client does. As a
 * {@link StreamingHttpOutputMessage} it hands the caller's body on as it came, so a client that
 * streams a body set that way (Spring's own all do) still streams it. Not thread-safe, as a
 * Spring request is not.
 */
final class RoutedRequest extends AbstractClientHttpRequest implements StreamingHttpOutputMessage {
  private final URI uri;
  private final HttpMethod method;
  private final ClientHttpRequestFactory others;
  private final ClientHttpRequestFactory keyed;
  private final String keyHeader;
  private ClientHttpRequest delegate;
  private Body body;

  RoutedRequest(URI uri, HttpMethod method, ClientHttpRequestFactory others, ClientHttpRequestFactory keyed,
      String keyHeader) {
    this.uri = uri;
    this.method = method;
    this.others = others;
    this.keyed = keyed;
    this.keyHeader = keyHeader;
  }

  @Override
  public HttpMethod getMethod() {
    return method;
  }

  @Override
  public URI getURI() {
    return uri;
  }

  @Override
  public void setBody(Body body) {
    Objects.requireNonNull(body, "body");
    assertNotExecuted();
    if (delegate != null) {
      throw new IllegalStateException("Invoke either getBody or setBody; not both");
    }
    this.body = body;
  }

  @Override
  protected OutputStream getBodyInternal(HttpHeaders headers) throws IOException {
    if (body != null) {
      throw new IllegalStateException("Invoke either getBody or setBody; not both");
    }
    return delegate(headers).getBody();
  }

  @Override
  protected ClientHttpResponse executeInternal(HttpHeaders headers) throws IOException {
    boolean created = delegate != null;
    ClientHttpRequest request = delegate(headers);
    if (created) {
      // A header set between getBody() and execute(), as a buffering client would still send it.
      headers.forEach((name, values) -> {
        List<String> now = SpringHeaders.values(request.getHeaders(), name);
        if (!now.equals(values)) {
          request.getHeaders().put(name, List.copyOf(values));
        }
      });
    }
    if (body != null) {
      if (request instanceof StreamingHttpOutputMessage streaming) {
        streaming.setBody(body);
      } else {
        body.writeTo(request.getBody());
      }
    }
    return request.execute();
  }

  /** The request of the factory the headers choose: the twin that follows no redirect iff keyed. */
  private ClientHttpRequest delegate(HttpHeaders headers) throws IOException {
    if (delegate == null) {
      boolean isKeyed = !SpringHeaders.values(headers, keyHeader).isEmpty();
      ClientHttpRequest request = (isKeyed ? keyed : others).createRequest(uri, method);
      headers.forEach((name, values) -> request.getHeaders().addAll(name, values));
      request.getAttributes().putAll(getAttributes());
      delegate = request;
    }
    return delegate;
  }
}
