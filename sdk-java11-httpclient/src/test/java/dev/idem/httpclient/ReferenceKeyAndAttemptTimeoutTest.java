package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.spi.AttemptTimeoutException;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.Scheduler;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Issue 14 on java.net.http: one key per business reference, and attemptTimeout on {@code send}. */
class ReferenceKeyAndAttemptTimeoutTest {
  static final byte[] SECRET = "java11-test-secret-0123456789".getBytes(StandardCharsets.UTF_8);

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  @Test
  void twoSubmissionsOfOneReferenceAreOneKeyAndOneEffectSyncAndAsync() throws Exception {
    Fixture f = new Fixture(b -> b.referenceKeySecret(SECRET), c -> { });
    IdempotentHttpResponse<String> first = f.client.operation("create-order").forReference("cart-42")
        .send(Fixture.post(server.url("/orders"), "{\"qty\":1}"), BodyHandlers.ofString());
    IdempotentHttpResponse<String> second = f.client.operation("create-order").forReference("cart-42")
        .sendAsync(Fixture.post(server.url("/orders"), "{\"qty\":1}"), BodyHandlers.ofString())
        .get(10, TimeUnit.SECONDS);

    IdempotencyKey expected = IdempotencyKey.derive(SECRET, OperationId.DEFAULT_SCOPE, "create-order", "cart-42");
    assertEquals(expected, first.operationId().key());
    assertEquals(expected, second.operationId().key());
    assertEquals(1, server.requestCount(), "the second was answered from the journal");
    assertEquals(1, server.totalEffects());

    // A restart with an empty journal and the same secret: same key, the server replays.
    Fixture restarted = new Fixture(b -> b.referenceKeySecret(SECRET.clone()), c -> { });
    IdempotentHttpResponse<String> third = restarted.client.operation("create-order").forReference("cart-42")
        .send(Fixture.post(server.url("/orders"), "{\"qty\":1}"), BodyHandlers.ofString());
    assertEquals(expected, third.operationId().key());
    assertEquals(1, server.effectCount(expected.value()));
    Fixture.assertKeyOnEveryRequest(server, expected, 2);
  }

  @Test
  void withoutASecretNothingIsJournaledOrSent() throws Exception {
    Fixture f = new Fixture();
    assertThrows(IllegalStateException.class, () -> f.client.operation("create-order").forReference("cart-42")
        .send(Fixture.post(server.url("/orders"), "{\"qty\":1}"), BodyHandlers.ofString()));
    CompletionException async = assertThrows(CompletionException.class, () -> f.client.operation("create-order")
        .forReference("cart-42").sendAsync(Fixture.post(server.url("/orders"), "{\"qty\":1}"), BodyHandlers.ofString())
        .join());
    assertTrue(async.getCause() instanceof IllegalStateException, async.toString());
    assertEquals(0, server.requestCount());
    assertEquals(0, f.journal.count(OperationState.PENDING) + f.journal.count(OperationState.SUCCEEDED));
  }

  @Test
  void aHungSendEndsByAttemptTimeoutAndIsRetriedWithTheSameKey() throws Exception {
    // HttpClient.send heeds interrupts: the executor's timer interrupts it. That timer needs real
    // time (200 ms); backoff still runs on the virtual sleeper, and the assertions are on the journal.
    server.plan().next(Fault.commitThenDelayResponse(Duration.ofSeconds(3)));
    ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();
    try {
      Fixture f = new Fixture(b -> b.scheduler(Scheduler.of(timers))
          .retryPolicy(RetryPolicy.builder().attemptTimeout(Duration.ofMillis(200)).build()), c -> { });
      IdempotentHttpResponse<String> r = f.client.operation("create-order")
          .send(Fixture.post(server.url("/orders"), "{\"qty\":1}"), BodyHandlers.ofString());
      assertEquals(201, r.statusCode());

      OperationRecord rec = f.record(r.operationId());
      assertEquals(OperationState.SUCCEEDED, rec.state());
      AttemptRecord first = rec.attempts().get(0);
      assertEquals(Classification.AMBIGUOUS, first.classification());
      assertEquals(AttemptTimeoutException.class.getName(), first.exceptionClass());
      Fixture.assertKeyOnEveryRequest(server, r.operationId().key(), 2);
      assertEquals(1, server.effectCount(r.operationId().key().value()));
      assertTrue(!Thread.currentThread().isInterrupted());
    } finally {
      timers.shutdownNow();
    }
  }
}
