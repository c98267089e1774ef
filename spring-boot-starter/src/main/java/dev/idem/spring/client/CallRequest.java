package dev.idem.spring.client;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.web.reactive.function.client.ClientRequest;

/** The request a WebClient response names: the app's, with the {@link IdempotentCall} among its attributes. */
final class CallRequest implements HttpRequest {
  private final ClientRequest request;
  private final Map<String, Object> attributes;

  CallRequest(ClientRequest request, IdempotentCall call) {
    this.request = request;
    this.attributes = new LinkedHashMap<>(request.attributes());
    this.attributes.put(IdempotentCall.ATTRIBUTE, call);
  }

  @Override
  public HttpMethod getMethod() {
    return request.method();
  }

  @Override
  public URI getURI() {
    return request.url();
  }

  @Override
  public Map<String, Object> getAttributes() {
    return attributes;
  }

  @Override
  public HttpHeaders getHeaders() {
    return request.headers();
  }
}
