package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Journal.claimWaiting (a claim that may wait briefly for another process holding the operation,
 * on PostgreSQL a locked row) is made only for an operation the app's own call named: execute of
 * an existing operation, resume(id), resumeAsync(id). Background passes (resumePending with one or
 * several lanes, an outbox dispatcher's deliveries) claim with Journal.claim, which skips at once,
 * so that instances sharing a journal never wait on each other (docs/fleet.md).
 */
class ClaimWaitsOnlyForTheAppsOwnCallTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal memory = new InMemoryJournal();
  private final AtomicInteger claims = new AtomicInteger();
  private final AtomicInteger waitingClaims = new AtomicInteger();
  private final ForwardingJournal journal = new ForwardingJournal(memory) {
    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      claims.incrementAndGet();
      return super.claim(id, owner, now, leaseFor);
    }

    @Override
    public Optional<Lease> claimWaiting(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      waitingClaims.incrementAndGet();
      return delegate().claimWaiting(id, owner, now, leaseFor);
    }
  };

  private IdempotentExecutor.Builder executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .sleeper(time.sleeper()).random(() -> 0.5).asyncExecutor(Runnable::run);
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  @Test
  void theAppsExecuteOfAnExistingOperationAndItsResumesByIdClaimWaiting() throws Exception {
    Operation a = order(1);
    Operation b = order(2);
    Operation c = order(3);
    try (IdempotentExecutor executor = executor().build()) {
      executor.enqueue(a);
      executor.enqueue(b);
      executor.enqueue(c);

      executor.execute(a, (request, key) -> ScriptedTransport.response(201));
      executor.resume(b.id(), (request, key) -> ScriptedTransport.response(201));
      executor.resumeAsync(c.id(), new FakeHost(time, FakeHost.always(201))).get();
    }
    assertEquals(3, waitingClaims.get(), "one waiting claim per operation the app named");
    assertEquals(0, claims.get(), "no skipping claim for them");
    for (Operation op : new Operation[] {a, b, c}) {
      assertEquals(OperationState.SUCCEEDED, memory.find(op.id()).orElseThrow().state());
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 3})
  void aResumePassNeverClaimsWaiting(int lanes) throws Exception {
    AtomicInteger sent = new AtomicInteger();
    try (IdempotentExecutor executor = executor().resumeConcurrency(lanes).build()) {
      for (int n = 0; n < 5; n++) {
        executor.enqueue(order(n));
      }
      executor.resumePending(Map.of("create-order", ResumeHandler.of((request, key) -> {
        sent.incrementAndGet();
        return ScriptedTransport.response(201);
      }, o -> { }, f -> { })));
    }
    assertEquals(5, sent.get());
    assertEquals(0, waitingClaims.get(), "a resume pass skips an operation another process holds, it never waits");
  }

  @Test
  void anOutboxDispatchersDeliveriesNeverClaimWaiting() throws Exception {
    FakeHost host = new FakeHost(time, FakeHost.always(201));
    try (IdempotentExecutor executor = executor().build();
        OutboxDispatcher outbox = OutboxDispatcher.builder(executor).clock(time.clock()).scheduler(time.scheduler())
            .registerAsync("create-order", host).build().start()) {
      CompletableFuture<Outcome> first = outbox.submit(order(1));
      CompletableFuture<Outcome> second = outbox.submit(order(2));
      time.advance(Duration.ofSeconds(5));
      first.get();
      second.get();
    }
    assertEquals(2, host.effects());
    assertEquals(0, waitingClaims.get(), "the dispatcher's deliveries skip an operation another process holds");
  }
}
