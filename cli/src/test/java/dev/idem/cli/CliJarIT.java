package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.JdbcIdempotencyStore;
import dev.idem.server.RecordId;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.SignatureScheme;
import dev.idem.webhooks.WebhookInbox;
import dev.idem.webhooks.WebhookReceiver;
import dev.idem.webhooks.WebhookSource;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The published CLI as an operator runs it: {@code java -jar idem-cli-VERSION-all.jar ...}, in a JVM
 * of its own with nothing but that jar, while this JVM plays the app and keeps its journal, webhook
 * inbox and guard store open (another process, as in production). Failsafe runs this after
 * "package", which made the jar.
 */
class CliJarIT {
  static final Path JAR = Path.of(System.getProperty("idem.cli.jar", "target/missing-all.jar")).toAbsolutePath();
  // Not the all-zero key: HMAC pads a key with zeros, so that one is the empty key, and refused.
  static final String SECRET = "whsec_aWRlbS10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm";

  @TempDir
  static Path dir;

  static JdbcJournal journal;
  static WebhookInbox inbox;
  static JdbcIdempotencyStore guardStore;

  @BeforeAll
  static void theAppRuns() throws Exception {
    assertTrue(Files.isRegularFile(JAR), JAR + " is built by the package phase (maven-shade-plugin)");
    journal = JdbcJournal.openEmbedded(dir.resolve("journal"));
    RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders"))
        .body("{\"amount\":1}".getBytes(StandardCharsets.UTF_8), "application/json").build();
    for (int i = 0; i < 3; i++) {
      OperationId id = new OperationId("tenant-1", "create-order", IdempotencyKey.of("jar-key-" + i));
      journal.begin(new NewOperation(id, null, Fingerprinter.defaults().fingerprint(snap), snap, Instant.now()));
    }

    inbox = WebhookInbox.sqlite(dir.resolve("inbox")).open();
    WebhookReceiver receiver = WebhookReceiver.builder(
        WebhookSource.builder("acme", SignatureScheme.standardWebhooks()).secret(SECRET).build(), inbox).build();
    byte[] body = WebhookSigner.jsonEvent("evt_jar", "order.paid", "{}");
    Map<String, List<String>> headers = new TreeMap<>();
    WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "evt_jar", "order.paid", Instant.now(), body).headers()
        .forEach((k, v) -> headers.put(k, List.of(v)));
    assertEquals(200, receiver.handle("POST", headers, body).status());

    guardStore = JdbcIdempotencyStore.sqlite(dir.resolve("guard.db"));
    Instant now = Instant.now();
    assertTrue(guardStore.claim(new RecordId("alice", "POST /orders", "jar-guard-1"), new Fingerprint("a".repeat(64)),
        "svc", now, now.plusSeconds(300), now.plus(Duration.ofHours(24))) instanceof ClaimAttempt.Claimed);
  }

  @AfterAll
  static void theAppStops() throws Exception {
    guardStore.close();
    inbox.close();
    journal.close();
  }

  @Test
  void theJarRunsOnItsOwnAndPrintsTheBuildsVersion() throws Exception {
    Run version = java("--version");
    assertEquals(0, version.code, version.err);
    assertEquals("idem " + System.getProperty("idem.project.version"), version.out.lines().findFirst().orElseThrow());
    try (JarFile jar = new JarFile(JAR.toFile())) {
      assertEquals("dev.idem.cli.IdemCli", jar.getManifest().getMainAttributes().getValue("Main-Class"));
      assertEquals(System.getProperty("idem.project.version"),
          jar.getManifest().getMainAttributes().getValue("Implementation-Version"));
    }
  }

  @Test
  void everyReadOnlyCommandRunsBesideTheLiveApp() throws Exception {
    String j = dir.resolve("journal").toString();
    String in = dir.resolve("inbox").toString();
    String g = dir.resolve("guard.db").toString();
    String[][] commands = {
        {"journal", "stats", "--dir", j},
        {"journal", "list", "--dir", j, "--state", "pending", "--limit", "2"},
        {"journal", "show", "--dir", j, "--scope", "tenant-1", "--operation", "create-order", "--key", "jar-key-0"},
        {"journal", "purge", "--dir", j, "--older-than", "P1D"},
        {"webhooks", "dead-letters", "--inbox", in},
        {"webhooks", "list", "--inbox", in, "--state", "pending"},
        {"webhooks", "stats", "--inbox", in},
        {"guard", "list", "--store", g},
        {"guard", "stats", "--store", g},
    };
    String[] expected = {"PENDING    3", "2 of 3 PENDING operation(s) shown", "key:        jar-key-0",
        "would purge 0", "0 dead letter(s)", "1 PENDING event(s)", "PENDING    1", "jar-guard-1", "IN_FLIGHT 1"};
    for (int i = 0; i < commands.length; i++) {
      Run r = java(commands[i]);
      String what = String.join(" ", commands[i]);
      assertEquals(0, r.code, what + ": " + r.err);
      assertTrue(r.out.contains(expected[i]), what + ":\n" + r.out);
      assertEquals("", r.err, what + ": no log noise on a healthy store");
    }
  }

  @Test
  void badInputExitsWithTheDocumentedStatus() throws Exception {
    Run limit = java("journal", "list", "--dir", dir.resolve("journal").toString(), "--limit", "-1");
    assertEquals(2, limit.code);
    assertTrue(limit.err.contains("--limit must be at least 1"), limit.err);

    Path missing = dir.resolve("missing");
    Run absent = java("journal", "stats", "--dir", missing.toString());
    assertEquals(1, absent.code);
    assertTrue(absent.err.startsWith("idem: no journal at"), absent.err);
    Run noInbox = java("webhooks", "stats", "--inbox", missing.toString());
    assertEquals(1, noInbox.code);
    assertTrue(noInbox.err.startsWith("idem: no webhook inbox at"), noInbox.err);
    Run noStore = java("guard", "stats", "--store", missing.resolve("x.db").toString());
    assertEquals(1, noStore.code);
    assertTrue(noStore.err.startsWith("idem: no idempotency store at"), noStore.err);
    assertFalse(Files.exists(missing), "the CLI never creates a store");
  }

  private record Run(int code, String out, String err) {}

  private static Run java(String... args) throws Exception {
    // sqlite-jdbc unpacks its native library into the temp directory and, on start, deletes the
    // copies other JVMs left there; on a shared /tmp it races the JVMs of other builds and logs
    // "Failed to delete old native lib" at ERROR, which is not Idem's noise. A directory of this
    // class's own keeps the no-noise check about Idem.
    Path natives = Files.createDirectories(dir.resolve("sqlite-natives"));
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Dorg.sqlite.tmpdir=" + natives, "-jar", JAR.toString()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).start();
    // A thread per stream, both reading at once: on CompletableFuture's default executor (from
    // JDK 25 on with 2 CPUs, the common pool with one worker) stderr was read only after stdout's
    // end, and a child that filled the stderr pipe first would hang until the 60 s below.
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()),
        task -> new Thread(task, "cli-stdout").start());
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()),
        task -> new Thread(task, "cli-stderr").start());
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("idem did not finish in 60 s: " + cmd);
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
