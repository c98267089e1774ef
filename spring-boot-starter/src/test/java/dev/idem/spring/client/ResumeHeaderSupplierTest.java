package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Classification;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.testkit.IdempotentServer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.http.client.JdkClientHttpRequestFactory;

/**
 * The resume transport's header supplier fails (its token service is down) before any request is
 * made: nothing reached the server, so the attempts are SAFE and the operation ends FAILED, never
 * UNCERTAIN. Failed before: the supplier's exception reached the executor as an ambiguous attempt.
 * (The same hole in the java.net.http adapter was found by a review on 2026-12-03.)
 */
class ResumeHeaderSupplierTest {
  @Test
  void aFailingHeaderSupplierSendsNothingAndNeverMakesTheOperationUncertain() throws Exception {
    InMemoryJournal journal = new InMemoryJournal();
    try (IdempotentServer server = IdempotentServer.start();
        IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal)
            .retryPolicy(RetryPolicy.builder().maxAttempts(3).build()).random(() -> 0.0).build()) {
      Transport resume = IdempotencyInterceptor.builder(executor).build()
          .resumeTransport(new JdkClientHttpRequestFactory(), r -> {
            throw new IllegalStateException("token service unavailable");
          });
      IdempotencyKey key = IdempotencyKey.generate();
      RequestSnapshot journaled = RequestSnapshot.builder("POST", server.url("/orders"))
          .body("{\"sku\":\"A-1\"}".getBytes(StandardCharsets.UTF_8), "application/json").build();

      assertThrows(IdempotencyException.class,
          () -> executor.execute(Operation.builder("create-order", journaled).key(key).build(), resume));

      assertEquals(0, server.requestCount(), "nothing was sent");
      OperationRecord record = journal.find(new OperationId(OperationId.DEFAULT_SCOPE, "create-order", key))
          .orElseThrow();
      assertEquals(OperationState.FAILED, record.state(), "nothing was sent, so it cannot be UNCERTAIN");
      assertEquals(3, record.attempts().size());
      record.attempts().forEach(a -> assertEquals(Classification.SAFE, a.classification(), a.toString()));
    }
  }
}
