package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.resume.ExpiredPendingAction;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Why: under {@link ExpiredPendingAction#RESEND} there is no age limit, yet a resume pass counted
 * an operation past it as expired before asking for its expiry (which RESEND declines), then sent
 * it and counted its outcome too: a SUCCEEDED operation in {@code expired}, which ResumeSummary
 * documents as the failed or uncertain ones that were not sent because of their age limit. Now
 * nothing is counted as expired unless the age limit ended it.
 */
class ResendSummaryCountsNoExpiryTest {
  @Test
  void aSequentialPassUnderResendCountsItsOldOperationsAsSentNotExpired() throws Exception {
    oldOperationsAreSentAndCountedSo(1);
  }

  @Test
  void aConcurrentPassUnderResendCountsItsOldOperationsAsSentNotExpired() throws Exception {
    oldOperationsAreSentAndCountedSo(2);
  }

  private void oldOperationsAreSentAndCountedSo(int lanes) throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.expiredPendingAction(ExpiredPendingAction.RESEND)
        .maxPendingAge(Duration.ofHours(1)).resumeConcurrency(lanes));
    Operation accepted = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    Operation refused = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    h.executor.enqueue(accepted);
    h.executor.enqueue(refused);
    h.time.jump(Duration.ofHours(25));  // far past the limit that RESEND does not apply
    FakeHost host = new FakeHost(h.time, (k, n, t) -> k.equals(refused.key()) ? Reply.status(400) : Reply.status(201));
    List<Outcome> succeeded = Collections.synchronizedList(new ArrayList<>());
    List<OperationException> failed = Collections.synchronizedList(new ArrayList<>());

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(host, succeeded::add, failed::add)));

    assertEquals(1, host.attempts(accepted.key()));
    assertEquals(1, host.attempts(refused.key()));
    assertEquals(OperationState.SUCCEEDED, h.state(accepted));
    assertEquals(OperationState.FAILED, h.state(refused));
    assertEquals(1, h.record(accepted).attempts().size());
    assertEquals(1, h.record(refused).attempts().size());
    assertEquals(1, succeeded.size());
    assertEquals(1, failed.size());
    assertEquals(new ResumeSummary(2, 1, 1, 0, 0, 0, 0, 0), summary, "nothing expired under RESEND");
  }
}
