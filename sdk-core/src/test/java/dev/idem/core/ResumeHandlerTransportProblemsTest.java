package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A ResumeHandler whose transport() misbehaves, during resumePending.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class ResumeHandlerTransportProblemsTest {
  private final Harness h = new Harness(Harness.POLICY, b -> b.circuitBreaker(CircuitBreakerSettings.disabled()));
  private final List<Outcome> successes = new ArrayList<>();
  private final List<OperationException> failures = new ArrayList<>();

  /**
   * One operation name's handler cannot build its transport (a missing credential, say). The
   * ResumeHandler Javadoc: "an exception is logged, the resume goes on". The other names' operations
   * must still be resumed by the same pass.
   */
  @Test
  void oneHandlerWhoseTransportThrowsDoesNotStopTheWholePass() throws Exception {
    Operation broken = Operation.builder("refund", Requests.order("{\"n\":1}")).build();
    h.executor.enqueue(broken);
    h.time.advance(Duration.ofMillis(1));
    Operation fine = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    h.executor.enqueue(fine);
    ScriptedTransport ok = h.transport(fine).then(ScriptedTransport.status(201));

    Map<String, ResumeHandler> handlers = new LinkedHashMap<>();
    handlers.put("refund", new ResumeHandler() {
      @Override
      public Transport transport() {
        throw new IllegalStateException("no credentials for the refund API yet");
      }

      @Override
      public void onSuccess(Outcome outcome) {
        successes.add(outcome);
      }

      @Override
      public void onFailure(OperationException failure) {
        failures.add(failure);
      }
    });
    handlers.put("create-order", ResumeHandler.of(ok, successes::add, failures::add));

    ResumeSummary summary;
    try {
      summary = h.executor.resumePending(handlers);
    } catch (RuntimeException e) {
      throw new AssertionError("resumePending threw " + e + "; 'create-order' left " + h.state(fine), e);
    }

    assertEquals(OperationState.SUCCEEDED, h.state(fine), "the well-configured operation; summary " + summary);
    assertEquals(OperationState.PENDING, h.state(broken));
  }

  /**
   * A handler whose transport() returns null: nothing can be sent. The operation must not end
   * UNCERTAIN (nothing can have taken effect) after a round of "ambiguous" attempts, and the
   * message should name the null transport.
   */
  @Test
  void aNullTransportIsNotRecordedAsAmbiguousAttempts() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    h.executor.enqueue(op);

    h.executor.resumePending(Map.of("create-order", new ResumeHandler() {
      @Override
      public Transport transport() {
        return null;  // ResumeHandler.of refuses null; a handler written as a class can still return it
      }

      @Override
      public void onSuccess(Outcome outcome) {
        successes.add(outcome);
      }

      @Override
      public void onFailure(OperationException failure) {
        failures.add(failure);
      }
    }));

    assertEquals(List.of(), h.record(op).attempts(), "attempts recorded for a transport that does not exist; ending "
        + h.state(op) + ", told " + failures);
  }
}
