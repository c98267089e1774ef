package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.ChildProcesses;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The client half through the starter survives the process dying mid-call: a Spring Boot app in a
 * child JVM POSTs through Boot's RestClient (untagged, so the starter keys and journals it); the
 * server commits the effect and holds the answer; the JVM is killed (SIGKILL: no shutdown hook,
 * no flush). The restarted app, same directory and instance name, delivers the operation with its
 * outbox under the same key: the server replays, one effect, and the journal says SUCCEEDED.
 */
class ClientCrashTest {
  @Test
  void aCallCutByAKillIsDeliveredAfterTheRestartUnderItsKeyOnce() throws Exception {
    // Under target/, kept: the children's logs are there when this fails.
    Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "client-crash-test")), "run-");
    // However this fails, no child outlives it (its port, its files, a share of the machine).
    try (IdempotentServer server = IdempotentServer.start(); ChildProcesses children = new ChildProcesses()) {
      server.plan().next(Fault.commitThenDelayResponse(Duration.ofMinutes(2)));
      Process first = start(children, dir, "first", server.url("/orders").toString());
      awaitTrue(() -> server.totalEffects() == 1, first, dir, "first", "the server ran the effect");
      first.destroyForcibly(); // SIGKILL while the POST waits for its answer
      assertTrue(first.waitFor(30, TimeUnit.SECONDS), "the child did not die");
      assertFalse(Files.exists(dir.resolve("answered")));
      String key = server.recordedRequests().get(0).keyHeader().orElseThrow(() -> new AssertionError("no key sent"));

      Process second = start(children, dir, "restart", null);
      awaitTrue(() -> server.requestCount() >= 2, second, dir, "restart", "the outbox re-sent the operation");
      List<String> keys = new ArrayList<>();
      for (ReceivedRequest r : server.recordedRequests()) {
        keys.add(r.keyHeader().orElse("(none)"));
      }
      assertEquals(List.of(key, key), keys, "the same key before and after the crash");
      assertEquals(1, server.effectCount(key), "one effect");
      second.destroy(); // SIGTERM: Boot's graceful shutdown flushes the journal
      assertTrue(second.waitFor(60, TimeUnit.SECONDS), "the restarted child did not stop");
    }
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir.resolve("idem").resolve("journal"))) {
      List<OperationRecord> done = journal.findByState(OperationState.SUCCEEDED, null, 10);
      assertEquals(1, done.size(), "one operation, delivered: " + done);
      assertEquals("untagged-post", done.get(0).id().operation());
      assertTrue(journal.findByState(OperationState.IN_FLIGHT, null, 10).isEmpty());
      assertTrue(journal.findByState(OperationState.PENDING, null, 10).isEmpty());
    }
  }

  private static Process start(ChildProcesses children, Path dir, String name, String url)
      throws IOException, InterruptedException {
    Files.deleteIfExists(dir.resolve("started"));
    List<String> args = url == null ? List.of(dir.toString()) : List.of(dir.toString(), url);
    Process p = children.add(ChildJvm.start(log(dir, name), List.of(), ClientCrashChild.class, args));
    awaitTrue(() -> Files.exists(dir.resolve("started")), p, dir, name, "the child started");
    return p;
  }

  private static void awaitTrue(BooleanSupplier condition, Process p, Path dir, String name, String what)
      throws IOException, InterruptedException {
    ChildJvm.await(condition, p, log(dir, name), what);
  }

  private static Path log(Path dir, String name) {
    return dir.resolve(name + ".log");
  }
}
