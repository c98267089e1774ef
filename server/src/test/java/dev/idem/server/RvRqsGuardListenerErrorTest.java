package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * docs/server.md, "The operator's view": "an exception a listener throws is logged and never
 * changes the guard's answer. On the background purge an {@code Error} is ignored too (a metrics
 * binder built against another Micrometer throws {@code NoSuchMethodError})". On the request path
 * it is not: {@code IdempotencyGuard.hear} catches only RuntimeException, so a listener's Error
 * leaves {@code admit} in place of the replay of a stored answer (every retry of a key that was
 * answered gets no answer, and an Idem client ends it UNCERTAIN instead of SUCCEEDED), and leaves
 * {@code complete} after the answer was stored, in place of the result the filter sends. The text
 * says the answer never changes; the code changes it for an Error, the very throwable the same
 * paragraph names as realistic.
 */
class RvRqsGuardListenerErrorTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock())
      .scheduler(time.scheduler()).purgeInterval(null)
      .listener(GuardListener.all(List.of(event -> {
        throw new NoSuchMethodError("'void io.micrometer.core.instrument.Counter.increment()' (a binder built"
            + " against another Micrometer)");
      })))
      .build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest order(String key) {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of(key), "alice",
        GuardRequest.BodyReader.of("{\"item\":1}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aListenerThatThrowsAnErrorChangesNeitherTheStoredAnswerNorItsReplay() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(order("k-1")));
    String completed;
    try {
      completed = String.valueOf(guard.complete(first.claim(), CapturedResponse.json(201, "{\"id\":1}")));
    } catch (Error e) {
      completed = "no answer: " + e;
    }
    String replay;
    try {
      replay = guard.admit(order("k-1")).getClass().getSimpleName();
    } catch (Error e) {
      replay = "no answer: " + e;
    }

    assertEquals(RecordState.COMPLETED, store.find(first.claim().id()).orElseThrow().state(), "the answer was stored");
    assertEquals("Respond", replay, "the retry of a stored answer is answered (a replay); complete() gave: " + completed);
    assertEquals(false, completed.startsWith("no answer"), "complete() after the answer was stored: " + completed);
  }

  /**
   * The exception to the rule: the JVM's own failure (a VirtualMachineError other than
   * StackOverflowError) is passed on, never logged and ignored; a StackOverflowError is the
   * listener's own, ignored like any other.
   */
  @Test
  void theJvmsOwnErrorFromAListenerIsPassedOnAndAStackOverflowIsNot() throws Exception {
    InternalError jvm = new InternalError("the JVM's own");
    java.util.concurrent.atomic.AtomicReference<Error> next = new java.util.concurrent.atomic.AtomicReference<>();
    try (IdempotencyGuard g = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).clock(time.clock())
        .scheduler(time.scheduler()).purgeInterval(null)
        .listener(event -> {
          Error e = next.get();
          if (e != null) {
            throw e;
          }
        }).build()) {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, g.admit(order("k-2")));
      g.complete(first.claim(), CapturedResponse.json(201, "{\"id\":2}"));

      next.set(new StackOverflowError("a recursive listener"));
      assertInstanceOf(Admission.Respond.class, g.admit(order("k-2")), "a StackOverflowError is the listener's own");
      next.set(jvm);
      assertSame(jvm, assertThrows(InternalError.class, () -> g.admit(order("k-2"))), "the JVM's own is passed on");
    }
  }
}
