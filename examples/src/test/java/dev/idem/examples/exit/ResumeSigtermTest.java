package dev.idem.examples.exit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.examples.childjvm.ChildJvm;
import dev.idem.testkit.IdempotentServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's "How a program ends": on SIGTERM "the embedded journal registers a JVM shutdown
 * hook that flushes and closes it, so nothing a caller was told is lost", and resume handlers "are
 * handed a queued operation's outcome once: the journal records each one a handler received, so a
 * restart does not confirm the same order again ... Only a crash between your callback and that
 * record repeats a callback". docs/journal.md: with {@code resumeConcurrency} above 1 the
 * deliveries are recorded that many at a time, "and the rest when the pass ends or stops on a
 * journal failure; a crash in between hands those outcomes once more".
 *
 * <p>A service delivering its queue with {@code resumePending} and {@code resumeConcurrency(4)} is
 * stopped with SIGTERM while some attempts are still on the wire, every handler call having
 * returned. SIGTERM is not a crash, and the shutdown hook closes the journal; yet the deliveries
 * held back for the next batch of four are never recorded (the pass is still running when the hook
 * closes the journal under it), and the restarted service confirms those orders a second time.
 */
class ResumeSigtermTest {
  private static final int COUNT = 20;

  @TempDir
  Path tmp;

  @Test
  void ordersConfirmedBeforeASigtermAreNotConfirmedAgainAfterTheRestart() throws Exception {
    Path journal = tmp.resolve("journal");
    try (IdempotentServer server = IdempotentServer.start()) {
      String base = server.url("/").toString();
      String first = runUntilSigterm(journal, base);
      Map<String, Integer> confirmations = confirmations(first, new TreeMap<>());
      assertEquals(ResumeSigtermChild.ANSWERED, confirmations.size(),
          "the first run confirmed the orders the target answered:\n" + first);

      String restart = runToEnd(journal, base);
      confirmations(restart, confirmations);
      List<String> twice = confirmations.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey)
          .collect(Collectors.toList());
      assertEquals(List.of(), twice, "orders whose handler had returned before SIGTERM were confirmed again after"
          + " the restart (their delivery was never recorded although the shutdown hook closed the journal)\n"
          + "first run:\n" + first + "\nrestart:\n" + restart);
      assertEquals(COUNT, confirmations.size(), restart);
    }
  }

  private String runUntilSigterm(Path journal, String base) throws Exception {
    Path log = tmp.resolve("first.log");
    Process child = ChildJvm.builder(ResumeSigtermChild.class,
        List.of(journal.toString(), base, "first", Integer.toString(COUNT))).redirectOutput(log.toFile()).start();
    try {
      if (!ChildJvm.awaitLine(child, log, MainEnding.DONE, Duration.ofSeconds(60))) {
        throw new AssertionError("the child never held all its lanes:\n" + Files.readString(log));
      }
      child.destroy(); // SIGTERM: the journal's shutdown hook runs
      if (!child.waitFor(60, TimeUnit.SECONDS)) {
        throw new AssertionError("the child did not exit after SIGTERM:\n" + Files.readString(log));
      }
      assertEquals(128 + 15, child.exitValue(), Files.readString(log));
    } finally {
      child.destroyForcibly();
    }
    return Files.readString(log);
  }

  private String runToEnd(Path journal, String base) throws Exception {
    Path log = tmp.resolve("restart.log");
    Process child = ChildJvm.builder(ResumeSigtermChild.class,
        List.of(journal.toString(), base, "restart", Integer.toString(COUNT))).redirectOutput(log.toFile()).start();
    try {
      if (!child.waitFor(120, TimeUnit.SECONDS)) {
        throw new AssertionError("the restart did not end:\n" + Files.readString(log));
      }
      assertEquals(0, child.exitValue(), Files.readString(log));
    } finally {
      child.destroyForcibly();
    }
    return Files.readString(log);
  }

  private static Map<String, Integer> confirmations(String output, Map<String, Integer> into) {
    for (String line : output.split("\n")) {
      if (line.startsWith("CONFIRMED ")) {
        into.merge(line.split(" ")[1], 1, Integer::sum);
      }
    }
    return into;
  }
}
