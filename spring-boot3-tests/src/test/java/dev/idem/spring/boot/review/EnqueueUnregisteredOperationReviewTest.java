package dev.idem.spring.boot.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.spring.autoconfigure.IdemAutoConfiguration;
import dev.idem.spring.autoconfigure.IdemClientAutoConfiguration;
import dev.idem.spring.client.IdempotencyInterceptor;
import dev.idem.testkit.IdempotentServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.http.MediaType;
import org.springframework.http.RequestEntity;

/**
 * {@code IdempotencyInterceptor.enqueue} ("Journals a request for queued delivery without sending it:
 * an OutboxDispatcher that registered a resumeTransport for operation sends it, now or after a
 * restart") accepts any operation name. With the starter's defaults the outbox has a transport for
 * {@code untagged-post} and {@code untagged-patch} only, so {@code enqueue("create-order", ...)} (the
 * README's enqueue, written in a Spring app) returns an id, journals the operation PENDING, and no
 * one ever sends it: the app was told "queued", the outbox skips the name at every poll and at the
 * graceful shutdown's drain, and after a restart it is still PENDING. Nothing is logged.
 *
 * <p>Expected: an enqueue for a name the starter's outbox has no transport for is refused before it
 * is journaled, naming {@code idem.outbox.operations} / {@code OutboxCustomizer} (or the operation
 * is delivered). Actual: it is accepted, journaled PENDING and never sent (effect count 0 after the
 * app closed).
 */
class EnqueueUnregisteredOperationReviewTest {
  @Test
  void enqueueForAnOperationTheOutboxCannotDeliverIsRefusedNotSilentlyParked(@TempDir Path dir) throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      IdempotencyKey key = IdempotencyKey.generate();
      OperationId[] queued = new OperationId[1];
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(IdemAutoConfiguration.class, IdemClientAutoConfiguration.class))
          .withPropertyValues("idem.directory=" + dir, "idem.shutdown-timeout=2s")
          .run(context -> {
            IdempotencyInterceptor idem = context.getBean(IdempotencyInterceptor.class);
            try {
              queued[0] = idem.enqueue("create-order", key, RequestEntity.post(server.url("/orders"))
                  .contentType(MediaType.APPLICATION_JSON).body("{\"item\":\"book\"}"));
            } catch (Exception refused) {
              // expected: the starter's outbox has no transport for create-order
            }
          }); // the context closes here: the graceful shutdown drains the outbox
      if (queued[0] == null) {
        return;
      }
      OperationState state;
      try (JdbcJournal journal = JdbcJournal.openReadOnly(dir.resolve("journal"))) {
        state = journal.find(queued[0]).orElseThrow().state();
      }
      fail("enqueue(\"create-order\") was accepted although the outbox delivers only idem.outbox.operations"
          + " (untagged-post, untagged-patch): after the app's graceful shutdown the operation is " + state
          + " in the journal and the server saw it " + server.effectCount(key.value())
          + " times; it will never be sent");
    }
  }
}
