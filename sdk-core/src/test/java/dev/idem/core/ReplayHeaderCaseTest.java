package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.event.IdemEvent;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A replay header and a should-retry header configured in any case are found in a response whose
 * names come in any other case, and the executor still gives the replay header's name as it was
 * configured.
 */
class ReplayHeaderCaseTest {
  private final VirtualTime time = new VirtualTime();
  private final List<IdemEvent> events = new ArrayList<>();

  private IdempotentExecutor executor(String replayHeader) {
    return IdempotentExecutor.builder().journal(new InMemoryJournal()).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5).listener(events::add)
        .replayHeader(replayHeader).build();
  }

  @Test
  void replayHeaderOfAnyCaseIsSeenAndKeepsItsConfiguredName() throws Exception {
    IdempotentExecutor executor = executor("X-Was-Replayed");
    ScriptedTransport transport = new ScriptedTransport(time)
        .then(ScriptedTransport.status(201, Map.of("x-WAS-replayed", " TRUE ")));
    Outcome outcome = executor.execute(Operation.builder("create-order", Requests.order("{\"n\":1}")).build(),
        transport);
    assertTrue(outcome.replayed());
    assertTrue(events.stream().anyMatch(e -> e instanceof IdemEvent.ReplaySeen), events.toString());
    assertEquals("X-Was-Replayed", executor.replayHeader());
    AdapterSupport support = AdapterSupport.of(executor, "Idempotency-Key", KeyHeaderFormat.BARE,
        UntaggedPolicy.PASS_THROUGH);
    assertTrue(support.isReplay(outcome.response()));
    assertFalse(support.isReplay(ScriptedTransport.response(201, Map.of("Idempotent-Replayed", "true"), "")));
  }

  @Test
  void shouldRetryHeaderOfAnyCaseIsRead() throws Exception {
    Classifier classifier = Classifier.shouldRetryHeader("X-Should-Retry");
    // A 400: on a status that may follow the effect (a 500) the hint's false gives no opinion.
    assertEquals(Verdict.permanent("HTTP 400, X-Should-Retry: false"),
        classifier.classify(ScriptedTransport.response(400, Map.of("x-SHOULD-retry", "False"), "")).orElseThrow());
    assertTrue(classifier.classify(ScriptedTransport.response(500, Map.of("X-SHOULD-RETRY", "true"), ""))
        .orElseThrow().toString().contains("X-Should-Retry: true"));
  }
}
