package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.resume.Reconciliation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.core.spi.Transport;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The in-memory SettledOutcomeOwedWhileHandedOverTest on the embedded journal: queued operations
 * end UNCERTAIN, owed to their resume handler; while instance A's resumePending hands the first
 * UNCERTAIN outcome over, instance B's reconcileUncertain settles them SUCCEEDED. A's delivery
 * records (one at a time, or one batch with two lanes) are fenced by the generation handed over,
 * so the SUCCEEDED outcomes stay owed and the next pass hands them; after that, and after a
 * restart, nothing is owed.
 */
class SettledOutcomeOwedWhileHandedOverJdbcTest {
  @TempDir
  Path tmp;
  private final VirtualTime time = new VirtualTime(T0.plusSeconds(3600));
  private final List<IdempotencyKey> sent = new CopyOnWriteArrayList<>();
  private final Transport server = (request, key) -> {
    sent.add(key);
    return Ops.ok("{\"id\":7}");
  };
  private final List<String> handed = new CopyOnWriteArrayList<>();

  @ParameterizedTest
  @ValueSource(ints = {1, 2})
  void theSettledSuccessesAreStillHandedToTheHandler(int resumeConcurrency) throws Exception {
    Path dir = tmp.resolve("journal");
    List<OperationId> ids = new ArrayList<>();
    try (JdbcJournal journal = JdbcJournal.embedded(dir).open()) {
      for (int i = 0; i < 2; i++) {
        ids.add(uncertain(journal, "order-" + i));
      }
      IdempotentExecutor reconciling = executor(journal, "instance-b", 1);
      IdempotentExecutor resuming = executor(journal, "instance-a", resumeConcurrency);
      Map<String, ResumeHandler> handlers = Map.of("create-order", ResumeHandler.of(server,
          outcome -> handed.add("succeeded"),
          failure -> {
            handed.add(failure.getClass().getSimpleName());
            if (handed.size() == 1) {
              try {
                assertEquals(2, reconciling.reconcileUncertain(r -> Reconciliation.succeeded(Ops.ok("{\"id\":7}"),
                    "found the order")));
              } catch (IdempotencyException e) {
                throw new AssertionError(e);
              }
            }
          }));

      resuming.resumePending(handlers);
      for (OperationId id : ids) {
        assertEquals(OperationState.SUCCEEDED, journal.find(id).orElseThrow().state(), "precondition: settled");
      }
      resuming.resumePending(handlers);

      assertEquals(List.of("OperationUncertainException", "OperationUncertainException", "succeeded", "succeeded"),
          handed, "each UNCERTAIN outcome, then the SUCCEEDED one reconciliation settled while it was handed over");
      for (OperationId id : ids) {
        OperationRecord r = journal.find(id).orElseThrow();
        assertNotNull(r.outcomeDeliveredAt(), "the SUCCEEDED outcome, once handed over, is recorded: " + r);
      }
    }
    try (JdbcJournal reopened = JdbcJournal.embedded(dir).open()) {
      assertEquals(List.of(), reopened.findUndelivered(null, 10), "a restart owes nothing");
      executor(reopened, "instance-a", resumeConcurrency).resumePending(Map.of("create-order",
          ResumeHandler.of(server, outcome -> handed.add("again"), failure -> handed.add("again"))));
    }
    assertEquals(4, handed.size(), "nothing handed over again after the restart: " + handed);
    assertEquals(List.of(), sent, "nothing is sent for a settled operation");
  }

  private static OperationId uncertain(JdbcJournal journal, String key) throws IdempotencyException {
    OperationId id = new OperationId("tenant", "create-order", IdempotencyKey.of(key));
    NewOperation base = Ops.op(id, "{\"order\":\"" + key + "\"}");
    NewOperation op = new NewOperation(id, null, base.fingerprint(), base.request(), T0, true);
    journal.begin(op);
    Lease lease = journal.claim(id, "instance-0", T0, Duration.ofMinutes(1)).orElseThrow();
    journal.recordAttemptAndTransition(id, lease, Ops.attempt(1, lease.generation(), T0),
        Transition.finish(OperationState.UNCERTAIN, T0, null, "read timeout after the request went out"));
    return id;
  }

  private IdempotentExecutor executor(Journal journal, String owner, int resumeConcurrency) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5)
        .resumeConcurrency(resumeConcurrency).build();
  }
}
