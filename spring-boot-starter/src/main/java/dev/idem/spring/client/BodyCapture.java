package dev.idem.spring.client;

import java.net.URI;
import java.util.concurrent.atomic.AtomicReference;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.AbstractClientHttpRequest;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ExchangeStrategies;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Encodes a WebClient request's body once, in memory, with the client's own codecs: what the
 * encoders write (the bytes, and the Content-Type and Content-Length they set) is what the journal
 * keeps and what every attempt sends. Nothing goes to the network.
 */
final class BodyCapture extends AbstractClientHttpRequest {
  private final HttpMethod method;
  private final URI uri;
  private final long limit;
  private final AtomicReference<byte[]> body = new AtomicReference<>(new byte[0]);

  private BodyCapture(ClientRequest request, long limit) {
    this.method = request.method();
    this.uri = request.url();
    this.limit = limit;
  }

  /**
   * The request's headers (as the encoders complete them) and body bytes; fails past
   * {@code limit + 1} bytes, and the caller refuses a body of {@code limit + 1}.
   */
  static Mono<BodyCapture> capture(ClientRequest request, ExchangeStrategies strategies, long limit) {
    BodyCapture capture = new BodyCapture(request, limit);
    // Written without the app's httpRequest(...) hook (per-request Reactor Netty settings): the
    // capture has no native request for it, and the hook belongs to the requests on the wire,
    // where each attempt runs it (ReactiveAttempts).
    ClientRequest bodyOnly = ClientRequest.create(request.method(), request.url())
        .headers(h -> request.headers().forEach(h::addAll)) // not addAll(HttpHeaders): Spring 7 changed its type
        .cookies(c -> c.addAll(request.cookies()))
        .attributes(a -> a.putAll(request.attributes()))
        .body(request.body())
        .build();
    return bodyOnly.writeTo(capture, strategies).then(Mono.fromSupplier(() -> capture));
  }

  byte[] bytes() {
    return body.get();
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
  public DataBufferFactory bufferFactory() {
    return DefaultDataBufferFactory.sharedInstance;
  }

  @Override
  public <T> T getNativeRequest() {
    throw new IllegalStateException("a captured body has no native request");
  }

  @Override
  public Mono<Void> writeWith(Publisher<? extends DataBuffer> chunks) {
    // Joined with a limit of one byte past the cap, so that an oversized body is refused without
    // holding more than that; a body of exactly one byte over gets through the join, and the
    // filter refuses it with ClientSupport.checkBody, the interceptor's check.
    // Compared before adding: limit + 1 overflows for maxBodyBytes(Long.MAX_VALUE) ("no cap").
    int max = limit >= Integer.MAX_VALUE - 9 ? Integer.MAX_VALUE - 8 : (int) limit + 1;
    return DataBufferUtils.join(Flux.from(chunks), max).map(joined -> {
      byte[] bytes = new byte[joined.readableByteCount()];
      joined.read(bytes);
      DataBufferUtils.release(joined);
      return bytes;
    }).doOnNext(body::set).then(doCommit());
  }

  @Override
  public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> chunks) {
    return writeWith(Flux.from(chunks).concatMap(Flux::from));
  }

  @Override
  public Mono<Void> setComplete() {
    return doCommit();
  }

  @Override
  protected void applyHeaders() {}

  @Override
  protected void applyCookies() {}
}
