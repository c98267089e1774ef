package dev.idem.spring.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.StreamingHttpOutputMessage;
import org.springframework.http.client.ClientHttpRequest;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.http.client.ClientHttpResponse;

/**
 * The redirect wrapper around Boot's request factories holds no body: every byte written to it is
 * already in the chosen client's request when the write returns, and a body set as a
 * {@link StreamingHttpOutputMessage.Body} is handed on as it came. Before, the wrapper buffered
 * every body, keyed or not, until execute(): the 64 MiB uploads below sat in its memory (these
 * tests failed so: no client request existed until execute(), and the wrapper was no
 * StreamingHttpOutputMessage). Deterministic: the client requests are fakes that count bytes.
 */
class RoutedRequestTest {
  private static final String KEY_HEADER = "Idempotency-Key";
  private static final URI URI_ = URI.create("http://localhost/uploads");
  private static final int CHUNK = 64 * 1024;
  private static final long LARGE = 64L * 1024 * 1024;

  private final Factory others = new Factory(false);
  private final Factory keyed = new Factory(false);
  private final ClientHttpRequestFactory routing = KeyedRedirects.routing(others, keyed, KEY_HEADER);

  @Test
  void anUnkeyedUploadWrittenToGetBodyReachesTheClientsRequestAsItIsWritten() throws IOException {
    ClientHttpRequest request = routing.createRequest(URI_, HttpMethod.POST);
    request.getHeaders().set("Content-Type", "application/octet-stream");
    OutputStream out = request.getBody();
    assertEquals(1, others.created.size(), "the client's request exists once the body is asked for");
    Fake sent = others.created.get(0);
    assertEquals(List.of("application/octet-stream"), SpringHeaders.values(sent.headers, "Content-Type"));
    byte[] chunk = new byte[CHUNK];
    for (long written = 0; written < LARGE; ) {
      out.write(chunk);
      written += chunk.length;
      assertEquals(written, sent.counted.count, "no byte waits in the wrapper");
    }
    request.execute();
    assertEquals(1, sent.executions);
    assertEquals(LARGE, sent.counted.count);
    assertTrue(keyed.created.isEmpty(), "an unkeyed request keeps Boot's redirect settings");
  }

  @Test
  void aStreamedBodyIsHandedToAStreamingClientAsItCame() throws IOException {
    Factory streamingOthers = new Factory(true);
    ClientHttpRequest request = KeyedRedirects.routing(streamingOthers, keyed, KEY_HEADER)
        .createRequest(URI_, HttpMethod.PUT);
    StreamingHttpOutputMessage.Body body = generator(LARGE, null);
    assertInstanceOf(StreamingHttpOutputMessage.class, request, "a converter may stream its body into it")
        .setBody(body);
    request.execute();
    Fake sent = streamingOthers.created.get(0);
    assertSame(body, sent.streamed, "the body itself, not a copy of it");
    assertEquals(0, sent.counted.count, "nothing was written on the way");
  }

  @Test
  void aStreamedBodyIsWrittenStraightIntoAClientThatOnlyOffersGetBody() throws IOException {
    ClientHttpRequest request = routing.createRequest(URI_, HttpMethod.POST);
    List<Fake> target = others.created;
    ((StreamingHttpOutputMessage) request).setBody(generator(LARGE, target));
    request.execute();
    assertEquals(LARGE, target.get(0).counted.count);
    assertEquals(1, target.get(0).executions);
  }

  @Test
  void aKeyedRequestGoesThroughTheTwinWithItsHeadersAndAttributes() throws IOException {
    ClientHttpRequest request = routing.createRequest(URI_, HttpMethod.POST);
    request.getHeaders().set(KEY_HEADER.toLowerCase(), "k-1");
    request.getAttributes().put("idem.operation", "create-order");
    request.getBody().write(new byte[] {1, 2, 3});
    request.execute();
    assertTrue(others.created.isEmpty());
    Fake sent = keyed.created.get(0);
    assertEquals(List.of("k-1"), SpringHeaders.values(sent.headers, KEY_HEADER));
    assertEquals("create-order", sent.attributes.get("idem.operation"));
    assertEquals(3, sent.counted.count);
  }

  @Test
  void aHeaderSetAfterGetBodyIsStillSent() throws IOException {
    ClientHttpRequest request = routing.createRequest(URI_, HttpMethod.POST);
    request.getHeaders().set("X-Trace", "a");
    request.getBody().write(1);
    request.getHeaders().set("X-Trace", "b");
    request.getHeaders().set("X-Late", "c");
    request.execute();
    Fake sent = others.created.get(0);
    assertEquals(List.of("b"), SpringHeaders.values(sent.headers, "X-Trace"));
    assertEquals(List.of("c"), SpringHeaders.values(sent.headers, "X-Late"));
  }

  @Test
  void getBodyAndSetBodyAreExclusive() throws IOException {
    ClientHttpRequest first = routing.createRequest(URI_, HttpMethod.POST);
    first.getBody();
    assertThrows(IllegalStateException.class, () -> ((StreamingHttpOutputMessage) first).setBody(o -> { }));
    ClientHttpRequest second = routing.createRequest(URI_, HttpMethod.POST);
    ((StreamingHttpOutputMessage) second).setBody(o -> { });
    assertThrows(IllegalStateException.class, second::getBody);
  }

  /**
   * {@code size} bytes written in chunks; with {@code requests}, each chunk is checked to have
   * reached the one request created there by the time its write returns.
   */
  private static StreamingHttpOutputMessage.Body generator(long size, List<Fake> requests) {
    return out -> {
      byte[] chunk = new byte[CHUNK];
      for (long written = 0; written < size; ) {
        out.write(chunk);
        written += chunk.length;
        if (requests != null) {
          assertEquals(written, requests.get(0).counted.count, "no byte waits in the wrapper");
        }
      }
    };
  }

  /** A client's request factory whose requests count their body's bytes and keep none. */
  private static final class Factory implements ClientHttpRequestFactory {
    final boolean streaming;
    final List<Fake> created = new ArrayList<>();

    Factory(boolean streaming) {
      this.streaming = streaming;
    }

    @Override
    public ClientHttpRequest createRequest(URI uri, HttpMethod method) {
      Fake r = streaming ? new StreamingFake(uri, method) : new Fake(uri, method);
      created.add(r);
      return r;
    }
  }

  private static class Fake implements ClientHttpRequest {
    final URI uri;
    final HttpMethod method;
    final HttpHeaders headers = new HttpHeaders();
    final Map<String, Object> attributes = new HashMap<>();
    final Counting counted = new Counting();
    StreamingHttpOutputMessage.Body streamed;
    int executions;

    Fake(URI uri, HttpMethod method) {
      this.uri = uri;
      this.method = method;
    }

    @Override
    public ClientHttpResponse execute() {
      executions++;
      return null;
    }

    @Override
    public OutputStream getBody() {
      return counted;
    }

    @Override
    public HttpHeaders getHeaders() {
      return headers;
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
    public Map<String, Object> getAttributes() {
      return attributes;
    }
  }

  private static final class StreamingFake extends Fake implements StreamingHttpOutputMessage {
    StreamingFake(URI uri, HttpMethod method) {
      super(uri, method);
    }

    @Override
    public void setBody(Body body) {
      streamed = body;
    }
  }

  private static final class Counting extends OutputStream {
    long count;

    @Override
    public void write(int b) {
      count++;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      count += len;
    }
  }
}
