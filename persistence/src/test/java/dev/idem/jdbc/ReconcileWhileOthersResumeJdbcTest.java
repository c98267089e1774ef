package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.resume.Reconciliation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.core.spi.Transport;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * reconcileUncertain on the embedded journal, with a second instance resuming the same journal right
 * after each of the reconciliation's writes: the server receives nothing, and what another process
 * reads (a read-only journal on the same files, committed data only) is the reconciler's answer as
 * soon as the write returned, so a crash after it resends nothing either. Before the settlement was
 * one write, the second instance found the operation PENDING after the re-drive and sent it.
 */
class ReconcileWhileOthersResumeJdbcTest {
  @TempDir
  Path tmp;
  private final Ops ops = new Ops(77);
  private final VirtualTime time = new VirtualTime(T0.plusSeconds(3600));
  private final List<IdempotencyKey> sent = new CopyOnWriteArrayList<>();
  private final Transport server = (request, key) -> {
    sent.add(key);
    return Ops.ok("{\"id\":7}");
  };
  private final List<OperationState> committedAfterEachWrite = new CopyOnWriteArrayList<>();

  @ParameterizedTest
  @EnumSource(value = OperationState.class, names = {"SUCCEEDED", "FAILED"})
  void anotherInstanceResumingDuringTheSettlementSendsNothing(OperationState settledAs) throws Exception {
    Path dir = tmp.resolve("journal");
    // Deferred commits wait an hour: what the other process reads was committed by the write itself.
    try (JdbcJournal journal = JdbcJournal.embedded(dir).deferredCommitInterval(Duration.ofHours(1)).open()) {
      NewOperation op = uncertain(journal);
      IdempotentExecutor other = executor(journal, "instance-b");
      Map<String, ResumeHandler> handlers = Map.of("create-order", ResumeHandler.of(server, o -> { }, f -> { }));
      Runnable afterWrite = () -> {
        try {
          committedAfterEachWrite.add(committedState(dir, op.id()));
          other.resumePending(handlers);
        } catch (IdempotencyException e) {
          throw new AssertionError(e);
        }
      };
      IdempotentExecutor reconciling = executor(observed(journal, afterWrite), "instance-a");

      int settled = reconciling.reconcileUncertain(r -> settledAs == OperationState.SUCCEEDED
          ? Reconciliation.succeeded(Ops.ok("{\"id\":7}"), "found order 7")
          : Reconciliation.failed("no such order"));

      assertEquals(List.of(), sent, "instance-b sent the operation being settled as " + settledAs);
      assertEquals(1, settled);
      assertEquals(settledAs, journal.find(op.id()).orElseThrow().state());
      assertEquals(List.of(settledAs), committedAfterEachWrite, "one write, committed when it returned");
    }
  }

  private NewOperation uncertain(JdbcJournal journal) throws IdempotencyException {
    NewOperation op = ops.newOp("{\"amount\":100}");
    journal.begin(op);
    Lease lease = journal.claim(op.id(), "instance-0", T0, Duration.ofMinutes(1)).orElseThrow();
    journal.recordAttemptAndTransition(op.id(), lease, new AttemptRecord(1, lease.generation(), T0, T0,
        Classification.AMBIGUOUS, null, "java.net.SocketTimeoutException", "read timeout", Duration.ZERO, "gave up"),
        Transition.finish(OperationState.UNCERTAIN, T0, null, "read timeout after the request went out"));
    return op;
  }

  private IdempotentExecutor executor(Journal journal, String owner) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5).build();
  }

  private static OperationState committedState(Path dir, OperationId id) throws IdempotencyException {
    try (JdbcJournal reader = JdbcJournal.openReadOnly(dir)) {
      return reader.find(id).orElseThrow().state();
    }
  }

  /** The journal the reconciling instance writes through: {@code afterWrite} runs after each write. */
  private static Journal observed(Journal journal, Runnable afterWrite) {
    return new ForwardingJournal(journal) {
      @Override
      public Optional<OperationRecord> redriveIfUnchanged(OperationRecord asRead, Instant now)
          throws IdempotencyException {
        Optional<OperationRecord> r = super.redriveIfUnchanged(asRead, now);
        afterWrite.run();
        return r;
      }

      @Override
      public Optional<OperationRecord> settleIfUnchanged(OperationRecord asRead, String owner, Duration leaseFor,
          Transition settlement) throws IdempotencyException {
        Optional<OperationRecord> r = super.settleIfUnchanged(asRead, owner, leaseFor, settlement);
        afterWrite.run();
        return r;
      }

      @Override
      public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
          throws IdempotencyException {
        Optional<Lease> r = super.claim(id, owner, now, leaseFor);
        afterWrite.run();
        return r;
      }

      @Override
      public OperationRecord transition(OperationId id, Lease lease, Transition t) throws IdempotencyException {
        OperationRecord r = super.transition(id, lease, t);
        afterWrite.run();
        return r;
      }
    };
  }
}
