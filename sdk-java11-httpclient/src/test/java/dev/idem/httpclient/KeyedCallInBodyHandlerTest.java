package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpClient;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.BodyHandlers;
import java.net.http.HttpResponse.BodySubscribers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A body handler that makes a blocking keyed call through another Idem client on the same
 * executor (to fetch what the response refers to, say) runs on the outer call's thread after the
 * outer executor call returned, while the outer {@code send} still holds its cancel handle: both
 * handles named the same call (thread, depth 1). Shutting the outer client down then cancelled the
 * inner call, which belongs to another, live client: its backoffs were skipped and it sent its
 * retries back to back, into a server that had just answered 503. A shutdown of one client must
 * touch its own calls only.
 *
 * <p>The backoff is the virtual sleeper: nothing sleeps for real.
 *
 * <p>Found by a review on 2026-12-06.
 */
class KeyedCallInBodyHandlerTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @Test
  void shuttingTheOuterClientDownDoesNotCancelTheBackoffOfACallTheBodyHandlerMakesThroughAnotherClient()
      throws Exception {
    IdempotentServer server = serverExtension.server();
    AtomicReference<IdempotentHttpClient> outer = new AtomicReference<>();
    // The outer client is shut down as the inner call begins its first backoff (the app stopping
    // that client while its last response is still being handled).
    Fixture f = new Fixture(b -> { }, c -> { }, delay -> outer.get().shutdown(), null);
    outer.set(IdempotentHttpClient.builder(plain()).idempotentExecutor(f.executor).build());
    IdempotentHttpClient other = IdempotentHttpClient.builder(plain()).idempotentExecutor(f.executor).build();

    OperationCall innerCall = other.operation("create-invoice");
    OperationId inner = innerCall.operationId();
    server.plan().forKey(inner.key().value(), 2, Fault.status(503));
    AtomicReference<String> innerBody = new AtomicReference<>();
    BodyHandler<String> handler = info -> {
      try {
        innerBody.set(innerCall.send(Fixture.post(server.url("/invoices"), "{\"order\":1}"), BodyHandlers.ofString())
            .body());
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
      return BodySubscribers.ofString(StandardCharsets.UTF_8);
    };
    OperationCall outerCall = outer.get().operation("create-order");

    IdempotentHttpResponse<String> response =
        outerCall.send(Fixture.post(server.url("/orders"), "{\"sku\":\"A-1\"}"), handler);

    assertEquals(201, response.statusCode());
    OperationRecord record = f.record(inner);
    assertEquals(OperationState.SUCCEEDED, record.state(), "attempts: " + record.attempts());
    assertEquals(3, record.attempts().size(), "attempts: " + record.attempts());
    assertEquals(2, f.time.sleeperWaits().size(),
        "the inner call, on a client nobody shut down, skipped its backoffs after the outer client's shutdown: "
            + f.time.sleeperWaits());
    assertFalse(innerBody.get().isEmpty());
    assertEquals(1, server.effectCount(inner.key().value()));
    assertEquals(OperationState.SUCCEEDED, f.record(outerCall.operationId()).state());
  }

  private static HttpClient plain() {
    return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  }
}
