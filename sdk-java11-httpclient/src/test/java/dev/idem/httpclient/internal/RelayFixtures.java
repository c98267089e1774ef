package dev.idem.httpclient.internal;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLSession;

/**
 * What the relay tests of this package drive a {@link ResponseRelay} with, without a socket: the
 * JDK's body subscription as a fake that counts what is asked of it, and a response around it.
 */
final class RelayFixtures {
  private RelayFixtures() {}

  /** The JDK's body subscription, counting the items asked for. */
  static final class Upstream implements Flow.Subscription, Flow.Publisher<List<ByteBuffer>> {
    final AtomicLong requested = new AtomicLong();
    final AtomicBoolean cancelled = new AtomicBoolean();

    @Override
    public void subscribe(Flow.Subscriber<? super List<ByteBuffer>> s) {
      s.onSubscribe(this);
    }

    @Override
    public void request(long n) {
      requested.addAndGet(n);
    }

    @Override
    public void cancel() {
      cancelled.set(true);
    }
  }

  static ByteBuffer bytes(String s) {
    return ByteBuffer.wrap(s.getBytes(StandardCharsets.US_ASCII));
  }

  /** A 400 with no declared length, whose body is {@code body}. */
  static HttpResponse<Flow.Publisher<List<ByteBuffer>>> response(Flow.Publisher<List<ByteBuffer>> body) {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:9/orders")).build();
    return new HttpResponse<>() {
      @Override
      public int statusCode() {
        return 400;
      }

      @Override
      public HttpRequest request() {
        return request;
      }

      @Override
      public Optional<HttpResponse<Flow.Publisher<List<ByteBuffer>>>> previousResponse() {
        return Optional.empty();
      }

      @Override
      public HttpHeaders headers() {
        return HttpHeaders.of(Map.of(), (a, b) -> true);
      }

      @Override
      public Flow.Publisher<List<ByteBuffer>> body() {
        return body;
      }

      @Override
      public Optional<SSLSession> sslSession() {
        return Optional.empty();
      }

      @Override
      public URI uri() {
        return request.uri();
      }

      @Override
      public HttpClient.Version version() {
        return HttpClient.Version.HTTP_1_1;
      }
    };
  }
}
