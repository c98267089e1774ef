package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link BackgroundFailure} on its own, its process end replaced by a record of the status: the
 * first failure is one line naming its thread and ends the process with status 1, after the
 * command's output is flushed; a second thread's failure meanwhile prints nothing more. A name or
 * message with a line break stays on the one line.
 */
class BackgroundFailureTest {
  @Test
  void theFirstFailureIsOneLineAndStatusOneAndASecondAddsNothing() throws Exception {
    StringWriter err = new StringWriter();
    AtomicInteger flushes = new AtomicInteger();
    List<Integer> halted = new CopyOnWriteArrayList<>();
    BackgroundFailure handler = new BackgroundFailure(new PrintWriter(err, true), flushes::incrementAndGet, halted::add);

    Thread first = new Thread(() -> {
      throw new IllegalStateException("store gone\nfake line");
    }, "idem-journal-flusher");
    first.setUncaughtExceptionHandler(handler);
    first.start();
    first.join();
    Thread second = new Thread(() -> {
      throw new OutOfMemoryError("Java heap space");
    }, "another");
    second.setUncaughtExceptionHandler(handler);
    second.start();
    second.join();

    assertEquals("idem: on thread idem-journal-flusher: java.lang.IllegalStateException: store gone\\nfake line"
        + System.lineSeparator(), err.toString());
    assertEquals(List.of(1), halted);
    assertEquals(1, flushes.get());
  }

  @Test
  void anErrorIsNamedWithItsAdvice() {
    assertEquals("idem: on thread idem-journal-close-at-exit: java.lang.OutOfMemoryError: Java heap space (the JVM ran"
        + " out of memory: start it with a larger -Xmx)",
        BackgroundFailure.line(new Thread(() -> { }, "idem-journal-close-at-exit"), new OutOfMemoryError("Java heap space")));
  }
}
