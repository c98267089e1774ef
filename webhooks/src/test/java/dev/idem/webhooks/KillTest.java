package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The receiving JVM is SIGKILLed after acknowledging deliveries and before processing them, then
 * again in the middle of a handler; after a restart every acknowledged event is processed and no
 * handler completes twice. Each phase is a real child JVM on the same embedded inbox.
 */
class KillTest {
  static final int EVENTS = 20;
  static final int KILL_IN_RUN = 7;
  static final int SIGKILL_EXIT = 137;

  @TempDir
  Path tmp;

  @Test
  void killedBetweenAcceptAndProcessingAndMidHandlerEveryAcceptedEventCompletesExactlyOnce() throws Exception {
    Path inbox = tmp.resolve("inbox");
    Path markers = tmp.resolve("markers.log");

    ChildJvm.Result accept = ChildJvm.run(tmp, KillChild.class, inbox.toString(), markers.toString(), "accept",
        Integer.toString(EVENTS));
    assertEquals(SIGKILL_EXIT, accept.exitCode(), "the accepting child should die by SIGKILL:\n" + accept.output());
    List<String> acked = lines(markers, "acked ");
    assertEquals(EVENTS, acked.size(), "every delivery was answered 2xx before the kill");
    assertEquals(List.of(), lines(markers, "start "), "nothing was processed before the kill");

    ChildJvm.Result midHandler = ChildJvm.run(tmp, KillChild.class, inbox.toString(), markers.toString(),
        "process-kill", Integer.toString(KILL_IN_RUN));
    assertEquals(SIGKILL_EXIT, midHandler.exitCode(), "killed inside a handler:\n" + midHandler.output());
    assertEquals(KILL_IN_RUN, lines(markers, "start ").size());
    assertEquals(KILL_IN_RUN - 1, lines(markers, "done ").size());

    ChildJvm.Result restart = ChildJvm.run(tmp, KillChild.class, inbox.toString(), markers.toString(), "process");
    assertEquals(0, restart.exitCode(), restart.output());

    Map<String, Long> done = lines(markers, "done ").stream()
        .collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
    for (String id : acked) {
      assertEquals(1L, done.getOrDefault(id, 0L), "handler completions of " + id);
    }
    assertEquals(EVENTS, done.size());
    List<String> starts = lines(markers, "start ");
    assertEquals(EVENTS + 1, starts.size(), "one run was interrupted and ran again: " + starts);
    String victim = starts.get(KILL_IN_RUN - 1).split(" ")[0];
    assertTrue(starts.contains(victim + " attempt 2"), "the interrupted run counted as an attempt: " + starts);

    try (WebhookInbox reopened = WebhookInbox.sqlite(inbox).open()) {
      assertEquals(EVENTS, reopened.counts().get(InboxState.DONE));
      List<String> outcomes = reopened.attempts("acme", victim).stream()
          .map(a -> a.outcome().orElse("?")).toList();
      assertEquals(List.of("interrupted", "done"), outcomes);
    }
  }

  private static List<String> lines(Path file, String prefix) throws Exception {
    if (!Files.exists(file)) {
      return List.of();
    }
    return Files.readAllLines(file).stream().filter(l -> l.startsWith(prefix)).map(l -> l.substring(prefix.length()))
        .toList();
  }
}
