package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Classification;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The resume transport's header supplier fails (a token service is down) before any request is
 * built, so nothing can have reached the server; the attempt must be SAFE and the operation must
 * never end UNCERTAIN.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class ResumeSupplierFailureTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  @Test
  void aFailingHeaderSupplierSendsNothingAndMustNotMakeTheOperationUncertain() throws Exception {
    IdempotentServer server = serverExtension.server();
    Fixture f = new Fixture();
    ResumeTransport resume = f.client.resumeTransport(s -> {
      throw new IllegalStateException("token service unavailable");
    }, Duration.ofSeconds(5));
    IdempotencyKey key = IdempotencyKey.generate();
    RequestSnapshot journaled = RequestSnapshot.builder("POST", server.url("/orders"))
        .body("{\"sku\":\"A-1\"}".getBytes(StandardCharsets.UTF_8), "application/json").build();
    Operation op = Operation.builder("create-order", journaled).key(key).build();

    assertThrows(IdempotencyException.class, () -> f.executor.execute(op, resume));

    assertEquals(0, server.requestCount(), "nothing was ever sent");
    OperationRecord rec = f.record(new OperationId(OperationId.DEFAULT_SCOPE, "create-order", key));
    assertEquals(OperationState.FAILED, rec.state(), "nothing was sent, so it cannot be UNCERTAIN");
    rec.attempts().forEach(a -> assertEquals(Classification.SAFE, a.classification(),
        "attempt " + a.number() + " never left the process: " + a));
  }
}
