package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@code GuardListener.all(List.of(logging, metrics))} was a forEach: when the first listener threw,
 * the ones after it heard nothing of that event (the Spring starter combines every GuardListener
 * bean this way). On a request the metrics missed every claim's end, replay and mismatch; on the
 * background purge, where a listener's Error is expected (a binder built against another
 * Micrometer) and ignored, the listeners after it never heard a purge. Every listener must be told;
 * what one throws still reaches the guard, which logs it and changes no answer.
 */
class ReviewGuardListenerAllStopsAtFirstThrowTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();

  private static GuardRequest post(String key, String json) {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of(key), "alice",
        GuardRequest.BodyReader.of(json.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aListenerThatThrowsFirstLeavesTheListenersAfterItHearingEveryRequestsEvent() throws Exception {
    List<GuardEvent> heardByBroken = new CopyOnWriteArrayList<>();
    List<GuardEvent> metrics = new CopyOnWriteArrayList<>();
    GuardListener broken = e -> {
      heardByBroken.add(e);
      throw new IllegalStateException("a broken log appender");
    };
    try (IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null).listener(GuardListener.all(List.of(broken, metrics::add)))
        .build()) {
      Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k1", "{}")));
      assertEquals(CompletionResult.STORED, guard.complete(p.claim(), CapturedResponse.json(201, "{\"id\":1}")));
      Admission.Respond replay = assertInstanceOf(Admission.Respond.class, guard.admit(post("k1", "{}")));
      assertEquals(Admission.Reason.REPLAY, replay.reason());
      assertEquals("{\"id\":1}", replay.response().bodyUtf8());
      assertEquals(Admission.Reason.KEY_REUSED,
          assertInstanceOf(Admission.Respond.class, guard.admit(post("k1", "{\"other\":1}"))).reason());
    }
    assertEquals(List.of(new GuardEvent.Completed("POST /orders", CompletionResult.STORED, Duration.ZERO),
        new GuardEvent.Replayed("POST /orders"), new GuardEvent.Mismatch("POST /orders")), heardByBroken);
    assertEquals(heardByBroken, metrics, "the listener after the one that threw missed events");
  }

  @Test
  void aListenersErrorOnThePurgeLeavesTheListenersAfterItHearingThePurge() {
    List<GuardEvent> metrics = new CopyOnWriteArrayList<>();
    GuardListener brokenBinder = event -> {
      if (event instanceof GuardEvent.Purged) {
        throw new NoSuchMethodError("io.micrometer.core.instrument.Counter.increment(double)");
      }
    };
    try (IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(Duration.ofMinutes(10))
        .listener(GuardListener.all(List.of(brokenBinder, metrics::add))).build()) {
      time.advance(Duration.ofMinutes(10));
      time.advance(Duration.ofMinutes(10));

      assertTrue(guard.lastPurgeFailure().isEmpty(), "the purges succeeded: " + guard.lastPurgeFailure());
    }
    assertEquals(List.of(new GuardEvent.Purged(0), new GuardEvent.Purged(0)), metrics,
        "the listener after the binder that threw never heard a purge");
  }

  /** An Error too waits until every listener was told, and no failure is lost on the way. */
  @Test
  void allTellsEveryListenerThenThrowsTheFirstErrorWithTheOtherFailuresSuppressed() {
    IllegalStateException broken = new IllegalStateException("a broken log appender");
    NoSuchMethodError linkage = new NoSuchMethodError("a metrics binder built against another Micrometer");
    List<GuardEvent> last = new CopyOnWriteArrayList<>();
    GuardListener listener = GuardListener.all(List.of(e -> {
      throw broken;
    }, e -> {
      throw linkage;
    }, e -> {
      throw broken;
    }, last::add));
    GuardEvent event = new GuardEvent.Replayed("POST /orders");

    NoSuchMethodError thrown = assertThrows(NoSuchMethodError.class, () -> listener.onEvent(event));
    assertEquals(List.of(event), last, "the last listener was not told");
    assertEquals(linkage, thrown);
    assertEquals(List.of(broken), List.of(thrown.getSuppressed()));
  }
}
