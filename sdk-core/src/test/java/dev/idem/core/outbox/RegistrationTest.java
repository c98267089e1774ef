package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.Outcome;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RegistrationTest {
  private final Operation op = Operation.builder("create-order", Requests.order("{}")).build();
  private final List<Outcome> successes = new ArrayList<>();
  private final List<OperationException> failures = new ArrayList<>();
  private final Registration reg = new Registration((request, key) -> null, successes::add, failures::add);

  @Test
  void aSuccessGoesToOnSuccess() {
    Outcome outcome = new Outcome(op.id(), FakeHost.response(201, Map.of()), false, false, List.of());
    reg.report(op.id(), outcome, null);
    assertEquals(List.of(outcome), successes);
    assertEquals(List.of(), failures);
  }

  @Test
  void anOperationExceptionGoesToOnFailureAsIs() {
    OperationUncertainException uncertain = new OperationUncertainException("no answer", null, op.id(), List.of(),
        null);
    reg.report(op.id(), null, uncertain);
    assertEquals(List.of(uncertain), failures);
  }

  @Test
  void anyOtherCauseReachesOnFailureWrappedAsFailed() {
    IllegalArgumentException gone = new IllegalArgumentException("no such operation in the journal");
    reg.report(op.id(), null, gone);
    OperationFailedException failed = assertInstanceOf(OperationFailedException.class, failures.get(0));
    assertSame(gone, failed.getCause());
    assertEquals(op.id(), failed.operationId());
  }

  @Test
  void withoutCallbacksNothingHappens() {
    // (A callback that throws is caught and logged at ERROR; not tested here, to keep the build log clean.)
    Registration silent = new Registration((request, key) -> null, null, null);
    Outcome outcome = new Outcome(op.id(), FakeHost.response(201, Map.of()), false, false, List.of());
    silent.report(op.id(), outcome, null);
    silent.report(op.id(), null, new IllegalStateException("x"));
  }
}
