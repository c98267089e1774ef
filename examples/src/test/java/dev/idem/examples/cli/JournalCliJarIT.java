package dev.idem.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Fingerprinter;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built CLI as an operator runs it: {@code java -jar examples/target/idem-journal.jar ...}, in
 * its own JVM with nothing but that jar. Failsafe runs this after "package", which made the jar.
 */
class JournalCliJarIT {
  static final Path JAR = Path.of("target", "idem-journal.jar").toAbsolutePath();

  @TempDir
  static Path dir;

  @BeforeAll
  static void seed() throws Exception {
    assertTrue(Files.isRegularFile(JAR), JAR + " is built by the package phase (maven-shade-plugin)");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir.resolve("journal"))) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders"))
          .body("{\"amount\":1}".getBytes(StandardCharsets.UTF_8), "application/json").build();
      for (int i = 0; i < 3; i++) {
        OperationId id = new OperationId("tenant-1", "create-order", IdempotencyKey.of("jar-key-" + i));
        j.begin(new NewOperation(id, null, Fingerprinter.defaults().fingerprint(snap), snap, Instant.now()));
      }
    }
  }

  @Test
  void runsOnItsOwnAndReadsAJournal() throws Exception {
    Run version = java("--version");
    assertEquals(0, version.code, version.err);
    assertTrue(version.out.contains("idem-journal"), version.out);

    Run stats = java("stats", "--dir", dir.resolve("journal").toString());
    assertEquals(0, stats.code, stats.err);
    assertTrue(stats.out.contains("PENDING    3"), stats.out);
    assertEquals("", stats.err, "no log noise on a healthy journal");

    Run list = java("list", "--dir", dir.resolve("journal").toString(), "--state", "pending", "--limit", "2");
    assertEquals(0, list.code, list.err);
    assertTrue(list.out.contains("jar-key-0") && list.out.contains("2 of 3 PENDING operation(s) shown"), list.out);
  }

  @Test
  void badInputExitsWithTheDocumentedStatus() throws Exception {
    Run limit = java("list", "--dir", dir.resolve("journal").toString(), "--limit", "-1");
    assertEquals(2, limit.code);
    assertTrue(limit.err.contains("--limit must be at least 1"), limit.err);

    Path missing = dir.resolve("missing");
    Run absent = java("stats", "--dir", missing.toString());
    assertEquals(1, absent.code);
    assertTrue(absent.err.startsWith("idem-journal: no journal at"), absent.err);
    assertFalse(Files.exists(missing), "the CLI never creates a journal");

    Run purge = java("purge", "--dir", dir.resolve("journal").toString(), "--older-than", "P1D");
    assertEquals(0, purge.code, purge.err);
    assertTrue(purge.out.contains("would purge 0"), purge.out);
  }

  private record Run(int code, String out, String err) {}

  private static Run java(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-jar", JAR.toString()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).start();
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("idem-journal did not finish in 60 s: " + cmd);
    }
    return new Run(p.exitValue(), out.get(), err.get());
  }

  private static String read(InputStream in) {
    try (in) {
      ByteArrayOutputStream b = new ByteArrayOutputStream();
      in.transferTo(b);
      return b.toString(StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
