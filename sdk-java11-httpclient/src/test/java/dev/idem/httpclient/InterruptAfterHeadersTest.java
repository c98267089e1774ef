package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.testkit.StreamingBodyServer;
import dev.idem.testkit.StreamingBodyServer.Reply;
import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The caller's thread is interrupted once the server's answer is in but while its body still
 * trickles: the executor records the answer (SUCCEEDED), and the wait for the caller's body handler
 * then throws InterruptedException. That exception used to carry no message, and the Javadoc said
 * an interrupted call leaves the operation PENDING: a caller who trusted it would retry a payment
 * the journal holds as done. It now says what the journal holds.
 *
 * <p>The interrupt is delivered by the client itself, right after the status line and headers, so
 * the test does not depend on when a thread gets there. Real socket, a 4 s trickle the call does
 * not wait for.
 */
class InterruptAfterHeadersTest {
  private final InMemoryJournal journal = new InMemoryJournal();
  private StreamingBodyServer server;

  @BeforeEach
  void start() throws Exception {
    server = StreamingBodyServer.start(n -> Reply.of(200, 40, true).trickled(Duration.ofMillis(100)));
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @Test
  void anInterruptAfterTheAnswerSaysTheOperationSucceeded() throws Exception {
    IdempotentHttpClient client = IdempotentHttpClient.builder(new InterruptedAtTheHeaders(Fixture.JDK))
        .idempotentExecutor(IdempotentExecutor.builder().journal(journal).build()).build();
    IdempotencyKey key = IdempotencyKey.generate();
    HttpRequest post = HttpRequest.newBuilder(server.url()).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"qty\":1}")).build();

    InterruptedException e = assertThrows(InterruptedException.class,
        () -> client.operation("create-order").key(key).send(post, BodyHandlers.ofString()));

    OperationId id = new OperationId(OperationId.DEFAULT_SCOPE, "create-order", key);
    assertEquals(OperationState.SUCCEEDED, journal.find(id).orElseThrow().state());
    assertTrue(e.getMessage() != null && e.getMessage().contains("SUCCEEDED"),
        "the journal holds the operation SUCCEEDED; the caller was told: " + e.getMessage());
    assertEquals(List.of(Optional.of(key.value())), server.keys(), "one request, with the key");
  }

  /** Delegates to a real client, and interrupts the calling thread as the answer's headers arrive. */
  private static final class InterruptedAtTheHeaders extends HttpClient {
    private final HttpClient delegate;

    InterruptedAtTheHeaders(HttpClient delegate) {
      this.delegate = delegate;
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
        throws IOException, InterruptedException {
      HttpResponse<T> response = delegate.send(request, handler);
      Thread.currentThread().interrupt();
      return response;
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
      return delegate.sendAsync(request, handler);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
        HttpResponse.PushPromiseHandler<T> push) {
      return delegate.sendAsync(request, handler, push);
    }

    @Override
    public Optional<CookieHandler> cookieHandler() {
      return delegate.cookieHandler();
    }

    @Override
    public Optional<Duration> connectTimeout() {
      return delegate.connectTimeout();
    }

    @Override
    public Redirect followRedirects() {
      return delegate.followRedirects();
    }

    @Override
    public Optional<ProxySelector> proxy() {
      return delegate.proxy();
    }

    @Override
    public SSLContext sslContext() {
      return delegate.sslContext();
    }

    @Override
    public SSLParameters sslParameters() {
      return delegate.sslParameters();
    }

    @Override
    public Optional<Authenticator> authenticator() {
      return delegate.authenticator();
    }

    @Override
    public Version version() {
      return delegate.version();
    }

    @Override
    public Optional<Executor> executor() {
      return delegate.executor();
    }
  }
}
