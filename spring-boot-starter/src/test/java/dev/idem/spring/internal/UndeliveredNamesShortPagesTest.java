package dev.idem.spring.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.RequestSnapshot;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The startup warning about PENDING operations no outbox sends counts every one of them, from a
 * journal that returns short pages (the SPI allows fewer records than asked for while more follow;
 * only an empty page is the last): it read one page of one record, took it for the last, and
 * under-counted the names to add to idem.outbox.operations.
 */
class UndeliveredNamesShortPagesTest {
  @Test
  void countsEveryPendingOperationAcrossShortPages() throws Exception {
    InMemoryJournal stored = new InMemoryJournal();
    ForwardingJournal onePerPage = new ForwardingJournal(stored) {
      @Override
      public List<OperationRecord> findByState(OperationState state, OperationId after, int limit)
          throws IdempotencyException {
        List<OperationRecord> page = super.findByState(state, after, limit);
        return page.isEmpty() ? page : List.of(page.get(0));
      }
    };
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(onePerPage).owner("app").build();
    try {
      for (int i = 0; i < 3; i++) {
        executor.enqueue(op("send-mail", i));
      }
      executor.enqueue(op("create-order", 0));

      Map<String, Integer> undelivered = UndeliveredNames.warn(executor, Set.of("create-order"));

      assertEquals(Map.of("send-mail", 3), undelivered);
    } finally {
      executor.close();
    }
  }

  private static Operation op(String name, int n) {
    RequestSnapshot r = RequestSnapshot.builder("POST", URI.create("https://api.example.test/" + name))
        .body(("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8), "application/json").build();
    return Operation.builder(name, r).build();
  }
}
