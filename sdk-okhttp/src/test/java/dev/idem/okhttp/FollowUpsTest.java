package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import dev.idem.testkit.ReceivedRequest;
import java.net.InetSocketAddress;
import java.net.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 24, "Every request on the wire is a journaled attempt", for what the shared contract does
 * not cover: a client with the interceptor alone, OkHttp's silent 408 repeat, an
 * {@code Authenticator}, a proxy authenticator's re-send (stopped by the follow-up guard), the
 * resume transport and the call factory over clients built without {@link IdemOkHttp#install},
 * and untagged calls, which keep OkHttp's redirects.
 */
class FollowUpsTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  /** The interceptor added by hand, OkHttp's defaults otherwise (retries and redirects on). */
  private static OkHttpClient interceptorOnly(IdemOkHttp idem) {
    return new OkHttpClient.Builder().addInterceptor(idem.interceptor()).build();
  }

  @Test
  void withTheInterceptorAloneA307IsNotFollowedAndA503RetryAfterZeroIsAnAttempt() throws Exception {
    IdemOkHttp idem = f.idem();
    OkHttpClient client = interceptorOnly(idem);

    IdempotentOperation redirected = IdempotentOperation.of("create-order");
    server.plan().next(Fault.redirect(307, "/moved"));
    try (Response r = client.newCall(Fixture.order(server.url("/orders"), redirected)).execute()) {
      assertEquals(307, r.code());
      assertEquals("/moved", r.header("Location"));
    }
    assertEquals(0, requestsTo("/moved"), "not re-POSTed to the new location");
    assertEquals(OperationState.FAILED, f.record(redirected).state());
    assertEquals(1, f.record(redirected).attempts().size());

    IdempotentOperation unavailable = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(503).withHeader("Retry-After", "0"));
    try (Response r = client.newCall(Fixture.order(server.url("/orders"), unavailable)).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(2, requestsWith(unavailable.key()));
    assertEquals(2, f.record(unavailable).attempts().size(), "requests on the wire = attempts in the journal");
  }

  @Test
  void okHttpsRepeatOfA408IsNotMadeIdemRetriesInstead() throws Exception {
    IdemOkHttp idem = f.idem();
    OkHttpClient client = interceptorOnly(idem);
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(408));
    try (Response r = client.newCall(Fixture.order(server.url("/orders"), op)).execute()) {
      assertEquals(201, r.code());
    }
    OperationRecord rec = f.record(op);
    assertEquals(2, requestsWith(op.key()));
    assertEquals(2, rec.attempts().size(), "the 408 is a journaled attempt of its own");
    assertEquals(Optional.of(408), rec.attempts().get(0).statusCode());
    assertEquals(1, server.effectCount(op.key().value()));
  }

  @Test
  void theAuthenticatorIsNotConsultedForAKeyedRequest() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    IdemOkHttp idem = f.idem();
    OkHttpClient client = idem.install(new OkHttpClient.Builder().authenticator((route, response) -> {
      asked.incrementAndGet();
      return response.request().newBuilder().header("Authorization", "Basic dXNlcjpwYXNz").build();
    })).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.status(401).withHeader("WWW-Authenticate", "Basic realm=\"orders\""));
    try (Response r = client.newCall(Fixture.order(server.url("/orders"), op)).execute()) {
      assertEquals(401, r.code(), "the attempt's answer, as OkHttp returns a challenge it does not answer");
    }
    assertEquals(0, asked.get());
    assertEquals(1, server.requestCount(), "no re-send with credentials below Idem");
    assertEquals(OperationState.FAILED, f.record(op).state());
    assertEquals(1, f.record(op).attempts().size());

    // Calls Idem passes through still get the authenticator.
    server.plan().next(Fault.status(401).withHeader("WWW-Authenticate", "Basic realm=\"orders\""));
    try (Response r = client.newCall(new Request.Builder().url(server.url("/profile").toString()).build()).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(1, asked.get());
  }

  /**
   * A bodyless keyed request through an HTTP proxy that asks for credentials: OkHttp's proxy
   * authenticator re-sends it, and no one-shot body can stop that. The follow-up guard of
   * {@link IdemOkHttp#install} refuses the second request before it reaches the network. The
   * attempt's only request on the wire was answered 407, which proves the server did not act, so
   * the attempt counts as not acted on (not ambiguous) and Idem sends the next one itself.
   */
  @Test
  void aFollowUpNothingElseStopsIsRefusedBeforeTheWireAndRetriedAsAnAttempt() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    IdemOkHttp idem = f.idem();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()
        .proxy(new Proxy(Proxy.Type.HTTP, new InetSocketAddress(server.url("/").getHost(), server.url("/").getPort())))
        .proxyAuthenticator((route, response) -> {
          asked.incrementAndGet();
          return response.request().newBuilder().header("Proxy-Authorization", "Basic cHJveHk6cGFzcw==").build();
        })).build();
    IdempotentOperation op = IdempotentOperation.of("cancel-order");
    server.plan().next(Fault.status(407).withHeader("Proxy-Authenticate", "Basic realm=\"proxy\""));
    // No body at all (Request.Builder.delete() would send an empty, and so one-shot, one).
    Request delete = new Request.Builder().url("http://orders.test/orders/7").method("DELETE", null)
        .tag(IdempotentOperation.class, op).build();
    try (Response r = client.newCall(delete).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(1, asked.get(), "OkHttp wanted to re-send");
    OperationRecord rec = f.record(op);
    assertEquals(OperationState.SUCCEEDED, rec.state());
    assertEquals(2, requestsWith(op.key()), "the refused follow-up never reached the wire");
    assertEquals(2, rec.attempts().size(), "requests on the wire = attempts in the journal");
    AttemptRecord first = rec.attempts().get(0);
    assertEquals(Classification.SAFE, first.classification(), first.toString());
    assertEquals(RequestNotSentException.class.getName(), first.exceptionClass());
  }

  @Test
  void untaggedCallsKeepOkHttpsRedirects() throws Exception {
    OkHttpClient client = f.idem().install(new OkHttpClient.Builder()).build();
    server.plan().next(Fault.redirect(302, "/moved"));
    try (Response r = client.newCall(new Request.Builder().url(server.url("/start").toString()).build()).execute()) {
      assertEquals(201, r.code());
    }
    assertEquals(1, requestsTo("/moved"), "followed, as OkHttp does");
    assertTrue(f.allRecords().isEmpty());
  }

  @Test
  void theResumeTransportOverAClientWithoutIdemSendsOneRequestPerAttempt() throws Exception {
    IdemOkHttp idem = f.idem();
    OkHttpClient plain = new OkHttpClient.Builder().build();
    IdempotencyKey key = IdempotencyKey.generate();
    RequestSnapshot journaled = RequestSnapshot.builder("POST", server.url("/orders"))
        .body(Fixture.ORDER.getBytes(StandardCharsets.UTF_8), "application/json").build();
    server.plan().next(Fault.redirect(302, "/moved"));
    ResponseSnapshot answer = idem.transport(plain).send(journaled, key);
    assertEquals(302, answer.status());
    assertEquals(Optional.of("/moved"), answer.header("Location"));
    assertEquals(0, requestsTo("/moved"), "not followed with a GET");
    assertEquals(1, server.requestCount());
  }

  @Test
  void theCallFactoryOverAClientWithoutIdemFollowsNoRedirect() throws Exception {
    IdemOkHttp idem = f.idem();
    OkHttpClient plain = new OkHttpClient.Builder().build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    server.plan().next(Fault.commitThenRedirect(303, "/orders/1"));
    CallFactoryTest.Result result = new CallFactoryTest.Result();
    idem.callFactory(plain).newCall(Fixture.order(server.url("/orders"), op)).enqueue(result);
    String got = awaitVirtual(result);
    assertTrue(got.startsWith("201"), got);
    assertEquals(0, requestsTo("/orders/1"), "not followed with a GET");
    assertEquals(2, requestsWith(op.key()));
    assertEquals(2, f.record(op).attempts().size());
    assertEquals(1, server.effectCount(op.key().value()));
  }

  /** Waits for an enqueued call, running the executor's virtual backoff meanwhile. */
  private String awaitVirtual(CallFactoryTest.Result result) throws Exception {
    return dev.idem.testkit.contract.AdapterContract.await(f.time, result.body);
  }

  private long requestsTo(String path) {
    return server.recordedRequests().stream().filter(r -> r.path().equals(path)).count();
  }

  private long requestsWith(IdempotencyKey key) {
    return server.recordedRequests().stream().map(ReceivedRequest::keyHeader)
        .filter(k -> k.equals(Optional.of(key.value()))).count();
  }
}
