package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.io.IOException;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Regression test for a defect found by review, described as it was; fixed: NotSentLocally.in walks a bounded cause list (Causes.of).
 *
 * <p>Review (core2) of 4ffc716d: NotSentLocally.in(failure), now called by AttemptLoop for every failed
 * attempt (judgeAndDecide, and notSent), walks the cause chain with {@code t.getCause()} and stops
 * only at null or a self-cause, which getCause never returns. A chain that loops through two
 * exceptions (initCause refuses only a direct self-cause) is followed round forever: the call hangs
 * on a busy loop, holding the operation IN_FLIGHT under a live lease and its single flight, and an
 * async call's journal thread with it. Causes.of exists for exactly this ("following such a loop round
 * would hang whoever classifies the failure"; ClassifierTest.aLoopingCauseChainIsClassifiedNotFollowedForever),
 * and the classifier itself copes; before this commit such a failure was retried and ended normally.
 *
 * <p>The hang is detected with a preemptive timeout (no sleep): the call ends at once when it works.
 */
class LoopingCauseNotSentLocallyTest {
  @ParameterizedTest
  @EnumSource(Harness.Driver.class)
  void aFailureWithALoopingCauseChainIsRetriedNotFollowedForever(Harness.Driver driver) {
    Harness h = new Harness();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    IOException outer = new IOException("connection reset");
    IOException inner = new IOException("wrapped", outer);
    outer.initCause(inner);
    ScriptedTransport t = h.transport(op).then(ScriptedTransport.fail(outer), ScriptedTransport.status(201));

    Outcome out = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> driver.run(h, op, t),
        "the attempt loop spins on the failure's looping cause chain (NotSentLocally.in)");
    assertEquals(201, out.response().status());
    assertEquals(2, t.sent().size());
  }
}
