package dev.idem.core.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Operation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.Sleeper;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Review rv-age: 810d118c ends an operation at its age limit at the claim before a retry (a late
 * wake). Inside resumePending that end reaches the pass as an OperationFailedException like any
 * other FAILED, so the summary counts it in {@code failed} but not in {@code expired}, although
 * ResumeSummary documents {@code failed} as "... or ended FAILED at their age limit, never sent"
 * and {@code expired} as those "not sent because they reached their age limit". An operator
 * watching expired (the signal that maxPendingAge is too low for the outage) sees 0.
 */
class RvAgeClaimExpirySummaryTest {
  private static final Duration AGE_LIMIT = Duration.ofHours(1);

  @Test
  void anOperationEndedAtItsAgeLimitByTheRetryClaimOfAPassIsCountedExpired() throws Exception {
    AtomicBoolean wakeLate = new AtomicBoolean();
    AtomicReference<VirtualTime> t = new AtomicReference<>();
    Sleeper late = d -> {
      t.get().sleeper().sleep(d);
      if (wakeLate.getAndSet(false)) {
        t.get().jump(Duration.ofMinutes(10));
      }
    };
    Harness h = new Harness(Harness.POLICY, b -> b.maxPendingAge(AGE_LIMIT).sleeper(late));
    t.set(h.time);
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    h.executor.enqueue(op);
    h.time.advance(AGE_LIMIT.minusSeconds(1));
    FakeHost host = new FakeHost(h.time, (k, n, now) -> {
      wakeLate.set(true);  // the backoff after this refused connection wakes past the limit
      return Reply.fail(new ConnectException("Connection refused"));
    });
    List<Outcome> ok = Collections.synchronizedList(new ArrayList<>());
    List<OperationException> failed = Collections.synchronizedList(new ArrayList<>());

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(host, ok::add, failed::add)));

    OperationRecord r = h.record(op);
    assertEquals(OperationState.FAILED, r.state());
    assertTrue(r.reason().contains("age limit"), r.reason());
    assertEquals(1, host.attempts(op.key()), "the retry past the limit was not sent");
    assertEquals(new ResumeSummary(1, 0, 1, 0, 0, 1, 0, 0), summary,
        "ended FAILED at its age limit by the pass: counted in failed and in expired");
  }
}
