package dev.idem.httpclient;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * An HttpClient that fails every exchange with a given exception, either before it takes any
 * byte of the request body (as a client does when it cannot get a connection, or a proxy
 * selector or an authenticator throws) or after it took the whole body (as when the connection
 * breaks while the response is awaited). Counts the bytes it took, so a test can tell the sides apart.
 * Or, {@linkplain #silent silent}, an asynchronous client that takes nothing and never answers.
 * Or, {@linkplain #headThenFailure head first}, a client that writes the request's head to its
 * server and fails before it takes the body, as the JDK does when its request timeout fires
 * between the two.
 */
final class ScriptedClient extends HttpClient {
  private final Exception failure;
  private final boolean afterBody;
  private final boolean headFirst;
  final AtomicInteger exchanges = new AtomicInteger();
  final AtomicLong bytesTaken = new AtomicLong();
  /** Every request it was handed, in order. */
  final java.util.List<HttpRequest> requests = new java.util.concurrent.CopyOnWriteArrayList<>();

  ScriptedClient(Exception failure, boolean afterBody) {
    this(failure, afterBody, false);
  }

  private ScriptedClient(Exception failure, boolean afterBody, boolean headFirst) {
    this.failure = failure;
    this.afterBody = afterBody;
    this.headFirst = headFirst;
  }

  /**
   * A client that does what the JDK's does up to the head and then fails: it asks the body's length
   * for the head ({@code Content-Length}), writes the head, key included, to the request's server
   * (a plain HTTP/1.1 head on a new connection), and fails with {@code failure} before it takes a
   * byte of the body (the JDK takes the body only once the head was handed to the connection, so
   * its request timeout or a cancel can land in between).
   */
  static ScriptedClient headThenFailure(Exception failure) {
    return new ScriptedClient(failure, false, true);
  }

  /**
   * A client whose {@code sendAsync} takes no byte of the body and never completes (a request
   * waiting for a connection, or for its turn to be written); only cancelling its future ends it.
   */
  static ScriptedClient silent() {
    return new ScriptedClient(null, false);
  }

  @Override
  public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler) throws IOException {
    if (failure == null) {
      throw new UnsupportedOperationException("a silent client answers sendAsync only");
    }
    exchanges.incrementAndGet();
    requests.add(request);
    if (headFirst) {
      writeHead(request);
    }
    if (afterBody) {
      // As the JDK does: the length for the head first (a GET's empty body too), then the body.
      request.bodyPublisher().orElseThrow().contentLength();
      drain(request);
    }
    if (failure instanceof IOException io) {
      throw io;
    }
    throw (RuntimeException) failure;
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
    if (failure == null) {
      exchanges.incrementAndGet();
      requests.add(request);
      return new CompletableFuture<>();
    }
    try {
      return CompletableFuture.completedFuture(send(request, handler));
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
      HttpResponse.PushPromiseHandler<T> push) {
    return sendAsync(request, handler);
  }

  /**
   * Takes the request's body now, counting its bytes in {@link #bytesTaken}: what a client whose
   * exchange went on after it had reported a failure (one that gave up waiting without stopping
   * the exchange under it, say) writes later.
   *
   * @return the error the body's publisher signalled instead of (the rest of) the body, or null
   */
  Throwable takeBodyLate(HttpRequest request) {
    AtomicReference<Throwable> error = new AtomicReference<>();
    drain(request, error);
    return error.get();
  }

  private void writeHead(HttpRequest request) throws IOException {
    StringBuilder head = new StringBuilder(request.method()).append(' ').append(request.uri().getRawPath())
        .append(" HTTP/1.1\r\nHost: ").append(request.uri().getAuthority()).append("\r\n");
    request.headers().map().forEach((name, values) -> values.forEach(v -> head.append(name).append(": ")
        .append(v).append("\r\n")));
    request.bodyPublisher().ifPresent(p -> head.append("Content-Length: ").append(p.contentLength()).append("\r\n"));
    head.append("\r\n");
    // Left open: the connection outlives the failure, as the JDK's may; the test's server closes it.
    java.net.Socket socket = new java.net.Socket(request.uri().getHost(), request.uri().getPort());
    socket.getOutputStream().write(head.toString().getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
    socket.getOutputStream().flush();
    heads.add(socket);
  }

  /** The connections {@link #headThenFailure} opened; closed by {@link #closeHeads}. */
  private final java.util.List<java.net.Socket> heads = new java.util.concurrent.CopyOnWriteArrayList<>();

  void closeHeads() throws IOException {
    for (java.net.Socket s : heads) {
      s.close();
    }
  }

  private void drain(HttpRequest request) {
    drain(request, new AtomicReference<>());
  }

  private void drain(HttpRequest request, AtomicReference<Throwable> error) {
    request.bodyPublisher().orElseThrow().subscribe(new Flow.Subscriber<ByteBuffer>() {
      @Override
      public void onSubscribe(Flow.Subscription s) {
        s.request(Long.MAX_VALUE);
      }

      @Override
      public void onNext(ByteBuffer item) {
        bytesTaken.addAndGet(item.remaining());
      }

      @Override
      public void onError(Throwable t) {
        error.set(t);
      }

      @Override
      public void onComplete() {}
    });
  }

  @Override
  public Optional<CookieHandler> cookieHandler() {
    return Optional.empty();
  }

  @Override
  public Optional<Duration> connectTimeout() {
    return Optional.empty();
  }

  @Override
  public Redirect followRedirects() {
    return Redirect.NEVER;
  }

  @Override
  public Optional<ProxySelector> proxy() {
    return Optional.empty();
  }

  @Override
  public SSLContext sslContext() {
    return Fixture.JDK.sslContext();
  }

  @Override
  public SSLParameters sslParameters() {
    return Fixture.JDK.sslParameters();
  }

  @Override
  public Optional<Authenticator> authenticator() {
    return Optional.empty();
  }

  @Override
  public Version version() {
    return Version.HTTP_1_1;
  }

  @Override
  public Optional<Executor> executor() {
    return Optional.empty();
  }
}
