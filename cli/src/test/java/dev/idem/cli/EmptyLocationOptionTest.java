package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * An empty location ({@code --dir "$JOURNAL_DIR"} with the variable unset) is an operator's typo,
 * not the current directory: {@code Path.of("")} resolves to it, so {@code purge --yes} once
 * deleted the journal's old operations in whatever directory the operator stood in. An empty or
 * blank {@code --dir}, {@code --jdbc-url}, {@code --inbox} or {@code --store} is bad usage (status
 * 2, one {@code idem: } line naming the option), as an empty {@code --key} already was.
 */
class EmptyLocationOptionTest {
  @TempDir
  Path dir;

  @Test
  void purgeYesWithAnEmptyDirLeavesTheJournalInTheCurrentDirectoryAlone() throws Exception {
    Path cwd = Files.createDirectory(dir.resolve("app"));
    OperationId old = new OperationId("shop", "charge-card", IdempotencyKey.of("order-8"));
    try (JdbcJournal j = JdbcJournal.openEmbedded(cwd)) {
      succeed(j, old, Instant.now().minus(Duration.ofDays(3)));
    }
    Map<String, String> before = listing(cwd);

    ChildCli r = ChildCli.runIn(cwd, dir, "journal", "purge", "--older-than", "P1D", "--yes", "--dir", "");

    assertEquals(2, r.code(), "an empty --dir exited " + r.code() + ":\n" + r.out() + r.err());
    assertOneLineNaming("--dir", r.err());
    assertEquals(before, listing(cwd), "nothing created or deleted in the current directory");
    try (JdbcJournal j = JdbcJournal.openReadOnly(cwd)) {
      assertTrue(j.find(old).isPresent(), "the current directory's journal lost its operation");
    }
  }

  @Test
  void everyCommandRefusesAnEmptyOrBlankLocationAsBadUsage() {
    List<Executable> checks = new ArrayList<>();
    for (String blank : new String[] {"", "  "}) {
      for (String[] command : new String[][] {
          {"journal", "list", "--dir", blank},
          {"journal", "stats", "--dir", blank},
          {"journal", "show", "--operation", "pay", "--key", "k-1", "--dir", blank},
          {"journal", "redrive", "--operation", "pay", "--key", "k-1", "--dir", blank},
          {"journal", "purge", "--older-than", "P1D", "--dir", blank},
          {"journal", "stats", "--jdbc-url", blank},
          {"journal", "purge", "--older-than", "P1D", "--yes", "--jdbc-url", blank},
          {"webhooks", "dead-letters", "--inbox", blank},
          {"webhooks", "list", "--state", "dead", "--inbox", blank},
          {"webhooks", "stats", "--inbox", blank},
          {"webhooks", "redrive", "--source", "stripe", "--event-id", "evt_1", "--inbox", blank},
          {"guard", "list", "--store", blank},
          {"guard", "stats", "--store", blank}}) {
        checks.add(() -> {
          CliRun r = CliRun.of(command);
          String what = "'" + String.join("' '", command) + "'";
          assertEquals(2, r.code(), what + " exited " + r.code() + ":\n" + r.out() + r.err());
          assertOneLineNaming(command[command.length - 2], r.err());
        });
      }
    }
    assertAll(checks);
  }

  /** One {@code idem: } line on standard error, naming the option and saying it is empty. */
  private static void assertOneLineNaming(String option, String err) {
    List<String> lines = err.lines().filter(l -> l.startsWith(IdemCli.PREFIX)).toList();
    assertEquals(1, lines.size(), "one idem: line:\n" + err);
    assertTrue(lines.get(0).contains(option) && lines.get(0).contains("empty"), "names " + option + ":\n" + err);
  }

  /** Each file of {@code d}, with its size and modification time. */
  private static Map<String, String> listing(Path d) throws Exception {
    Map<String, String> files = new TreeMap<>();
    try (Stream<Path> s = Files.list(d)) {
      for (Path p : s.toList()) {
        files.put(p.getFileName().toString(), Files.size(p) + " " + Files.getLastModifiedTime(p));
      }
    }
    return files;
  }

  private static void succeed(JdbcJournal j, OperationId id, Instant at) throws Exception {
    RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/charges")).build();
    j.begin(new NewOperation(id, null, Fingerprinter.defaults().fingerprint(snap), snap, at, false));
    Lease lease = j.claim(id, "app", at, Duration.ofMinutes(1)).orElseThrow();
    j.transition(id, lease, Transition.finish(OperationState.SUCCEEDED, at.plusMillis(5),
        new ResponseSnapshot(201, Map.of(), new byte[0]), "HTTP 201"));
  }
}
