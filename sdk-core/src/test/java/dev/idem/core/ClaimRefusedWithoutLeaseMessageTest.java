package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A claim that returns nothing for an operation no lease holds (PENDING, no owner: on PostgreSQL,
 * its row was locked by another process at that moment) is not described as a lease "under owner
 * null until null" that will expire.
 */
class ClaimRefusedWithoutLeaseMessageTest {
  @Test
  void aPendingOperationWhoseClaimReturnedNothingIsNotDescribedAsLeased() throws Exception {
    InMemoryJournal memory = new InMemoryJournal();
    ForwardingJournal lockedRow = new ForwardingJournal(memory) {
      @Override
      public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor) {
        return Optional.empty(); // another process is claiming or updating the row right now
      }
    };
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    AtomicInteger sends = new AtomicInteger();
    try (IdempotentExecutor executor = IdempotentExecutor.builder().journal(lockedRow).build()) {
      executor.enqueue(op);

      OperationPendingException e = assertThrows(OperationPendingException.class,
          () -> executor.resume(op.id(), (request, key) -> {
            sends.incrementAndGet();
            return ScriptedTransport.response(201);
          }));

      String m = e.getMessage();
      assertFalse(m.contains("under owner null"), m);
      assertFalse(m.contains("when that lease expires"), m);
      assertTrue(m.contains("held by no lease"), m);
      assertTrue(m.contains("another process was claiming or updating it"), m);
    }
    assertEquals(0, sends.get());
    assertEquals(OperationState.PENDING, memory.find(op.id()).orElseThrow().state());
  }
}
