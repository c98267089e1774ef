package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.PasswordAuthentication;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 24, "Every request on the wire is a journaled attempt", for java.net.http beyond the
 * shared contract (which runs on a delegate with {@code Redirect.NORMAL}): a delegate's
 * {@link Authenticator} re-sent a keyed POST answered 401, the resume transport followed
 * redirects of the delegate's policy, and a decorating delegate whose follow-ups Idem cannot stop
 * was accepted.
 */
class FollowUpsTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  /** A delegate with an authenticator that counts the server challenges it answers. */
  private static HttpClient withAuthenticator(AtomicInteger asked) {
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).authenticator(new Authenticator() {
      @Override
      protected PasswordAuthentication getPasswordAuthentication() {
        asked.incrementAndGet();
        return new PasswordAuthentication("user", "pass".toCharArray());
      }
    }).build();
  }

  @Test
  void theDelegatesAuthenticatorDoesNotReSendAKeyedRequest() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    HttpClient delegate = withAuthenticator(asked);
    Fixture f = new Fixture(b -> { }, c -> { });
    IdempotentHttpClient client = IdempotentHttpClient.builder(delegate).idempotentExecutor(f.executor).build();
    IdempotencyKey key = IdempotencyKey.generate();
    server.plan().next(Fault.status(401).withHeader("WWW-Authenticate", "Basic realm=\"orders\""));
    HttpResponse<String> r = client.operation("create-order").key(key)
        .send(Fixture.post(server.url("/orders"), "{\"qty\":1}"), BodyHandlers.ofString());
    assertEquals(401, r.statusCode(), "the attempt's answer");
    assertEquals(Optional.of("Basic realm=\"orders\""), r.headers().firstValue("WWW-Authenticate"),
        "all the JDK client keeps of the 401: its status and challenge");
    assertEquals(0, asked.get());
    assertEquals(1, server.requestCount(), "no re-send with credentials below Idem");
    IdempotentHttpResponse<String> keyed = (IdempotentHttpResponse<String>) r;
    assertEquals(OperationState.FAILED, keyed.state());
    assertEquals(1, keyed.attempts().size());

    // Calls Idem passes through still get the delegate's authenticator.
    server.plan().next(Fault.status(401).withHeader("WWW-Authenticate", "Basic realm=\"orders\""));
    HttpResponse<String> plain = client.send(HttpRequest.newBuilder(server.url("/profile")).build(),
        BodyHandlers.ofString());
    assertEquals(201, plain.statusCode());
    assertEquals(1, asked.get());
  }

  @Test
  void theResumeTransportFollowsNoRedirectOfTheDelegatesPolicy() throws Exception {
    HttpClient delegate = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .followRedirects(HttpClient.Redirect.ALWAYS).build();
    Fixture f = new Fixture(b -> { }, c -> { });
    IdempotentHttpClient client = IdempotentHttpClient.builder(delegate).idempotentExecutor(f.executor).build();
    IdempotencyKey key = IdempotencyKey.generate();
    RequestSnapshot journaled = RequestSnapshot.builder("POST", server.url("/orders"))
        .body("{\"qty\":1}".getBytes(StandardCharsets.UTF_8), "application/json").build();
    server.plan().next(Fault.redirect(307, "/moved"));
    ResponseSnapshot answer = client.resumeTransport().send(journaled, key);
    assertEquals(307, answer.status());
    assertEquals(Optional.of("/moved"), answer.header("Location"));
    assertEquals(1, server.requestCount(), "not re-POSTed to the new location");

    // The delegate itself keeps its policy for calls Idem passes through.
    server.plan().next(Fault.redirect(302, "/moved"));
    assertEquals(201, client.send(HttpRequest.newBuilder(server.url("/start")).build(), BodyHandlers.ofString())
        .statusCode());
    assertEquals(1, server.recordedRequests().stream().filter(q -> q.path().equals("/moved")).count());
  }

  @Test
  void aDecoratingDelegateThatFollowsRedirectsIsRefused() {
    HttpClient following = new Decorating(HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NORMAL).build());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> IdempotentHttpClient.builder(following));
    assertTrue(e.getMessage().contains("Redirect.NEVER"), e.getMessage());
    // One that does not follow up is fine: its keyed attempts go through it, decorations and all.
    IdempotentHttpClient.builder(new Decorating(Fixture.JDK)).build();
  }

  /** An HttpClient of the app's own that adds something (tracing, say) around the JDK's. */
  private static final class Decorating extends HttpClient {
    private final HttpClient inner;

    Decorating(HttpClient inner) {
      this.inner = inner;
    }

    @Override
    public Optional<CookieHandler> cookieHandler() {
      return inner.cookieHandler();
    }

    @Override
    public Optional<Duration> connectTimeout() {
      return inner.connectTimeout();
    }

    @Override
    public Redirect followRedirects() {
      return inner.followRedirects();
    }

    @Override
    public Optional<ProxySelector> proxy() {
      return inner.proxy();
    }

    @Override
    public SSLContext sslContext() {
      return inner.sslContext();
    }

    @Override
    public SSLParameters sslParameters() {
      return inner.sslParameters();
    }

    @Override
    public Optional<Authenticator> authenticator() {
      return inner.authenticator();
    }

    @Override
    public Version version() {
      return inner.version();
    }

    @Override
    public Optional<Executor> executor() {
      return inner.executor();
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
        throws IOException, InterruptedException {
      return inner.send(request, handler);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
      return inner.sendAsync(request, handler);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
        HttpResponse.PushPromiseHandler<T> push) {
      return inner.sendAsync(request, handler, push);
    }
  }
}
