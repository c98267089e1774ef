package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The guard reports through one listener method and a sealed set of records (issue 26, the
 * client's style): how each claim ended and how long its handler held it, and a listener that
 * throws never changes an answer.
 */
class GuardEventsTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();

  private static GuardRequest post(String key, String json) {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of(key), "alice",
        GuardRequest.BodyReader.of(json.getBytes(StandardCharsets.UTF_8)));
  }

  private IdempotencyGuard guard(GuardListener listener) {
    return IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null)
        .listener(listener).build();
  }

  @Test
  void everyListenerHearsHowEachClaimEndedAndHowLongItWasHeld() throws Exception {
    List<GuardEvent> first = Collections.synchronizedList(new ArrayList<>());
    List<GuardEvent> second = Collections.synchronizedList(new ArrayList<>());
    try (IdempotencyGuard guard = guard(GuardListener.all(List.of(first::add, second::add)))) {
      Admission.Proceed stored = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k1", "{}")));
      time.advance(Duration.ofMillis(1500));
      guard.complete(stored.claim(), CapturedResponse.json(201, "{}"));
      Admission.Proceed released = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k2", "{}")));
      time.advance(Duration.ofMillis(200));
      guard.complete(released.claim(), CapturedResponse.json(503, "{}"));
      Admission.Proceed threw = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k3", "{}")));
      guard.abandon(threw.claim());
      guard.admit(post("k1", "{}"));
      guard.admit(post("k1", "{\"other\":1}"));
    }
    assertEquals(List.of(
        new GuardEvent.Completed("POST /orders", CompletionResult.STORED, Duration.ofMillis(1500)),
        new GuardEvent.Completed("POST /orders", CompletionResult.RELEASED, Duration.ofMillis(200)),
        new GuardEvent.Completed("POST /orders", CompletionResult.RELEASED, Duration.ZERO),
        new GuardEvent.Replayed("POST /orders"),
        new GuardEvent.Mismatch("POST /orders")), first);
    assertEquals(first, second);
  }

  @Test
  void aListenerThatThrowsChangesNoAnswer() throws Exception {
    List<GuardEvent> heard = new ArrayList<>();
    try (IdempotencyGuard guard = guard(e -> {
      heard.add(e);
      throw new IllegalStateException("broken listener");
    })) {
      Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k1", "{}")));
      assertEquals(CompletionResult.STORED, guard.complete(p.claim(), CapturedResponse.json(201, "{\"id\":1}")));
      Admission.Respond replay = assertInstanceOf(Admission.Respond.class, guard.admit(post("k1", "{}")));
      assertEquals(Admission.Reason.REPLAY, replay.reason());
      assertEquals("{\"id\":1}", replay.response().bodyUtf8());
      assertEquals(Admission.Reason.KEY_REUSED,
          assertInstanceOf(Admission.Respond.class, guard.admit(post("k1", "{\"other\":1}"))).reason());
      assertInstanceOf(Admission.Proceed.class, guard.admit(post("k2", "{}")));
      assertEquals(Admission.Reason.IN_FLIGHT,
          assertInstanceOf(Admission.Respond.class, guard.admit(post("k2", "{}"))).reason());
    }
    assertEquals(4, heard.size(), "completed, replayed, mismatch, conflict: " + heard);
  }
}
