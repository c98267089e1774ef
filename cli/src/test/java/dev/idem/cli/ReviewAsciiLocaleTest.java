package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI run where no UTF-8 locale is set: a cron job, a systemd unit, {@code kubectl exec} or
 * {@code docker exec} into an image without {@code LANG}, all of which run in the POSIX locale. The
 * CLI encodes its output in the charset {@code System.out} would use there (US-ASCII), and the
 * encoder replaces every character it cannot encode with {@code ?}. Two operations whose scopes
 * are {@code café} and {@code cafè} (tenants' names are whatever the app gave) then print as the
 * same row, {@code caf?}, and neither can be pasted back into {@code show}. The docs promise that
 * an identity is printed so that it can be pasted back ({@code $'...'} escapes) and that a forged
 * or invisible character never hides which row is which; the CLI already escapes unpaired
 * surrogates for exactly this reason ("an encoder prints it as ?, hiding which one it was"), but
 * not the far commoner characters that the output charset cannot encode.
 *
 * <p>Found by a review on 2026-12-06.
 */
class ReviewAsciiLocaleTest {
  @TempDir
  Path dir;

  @Test
  void twoScopesThatDifferInOneAccentListAsTwoDifferentRowsInThePosixLocale() throws Exception {
    Path journal = dir.resolve("journal");
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
      for (String scope : List.of("caf\u00e9", "caf\u00e8")) {
        j.begin(new NewOperation(new OperationId(scope, "create-order", IdempotencyKey.of("k-1")), null,
            Fingerprinter.defaults().fingerprint(snap), snap, Instant.now()));
      }
    }

    Run r = runInPosixLocale("journal", "list", "--dir", journal.toString());

    assertEquals(0, r.code, r.err);
    List<String> scopes = r.out.lines().filter(l -> l.startsWith("PENDING"))
        .map(l -> l.split("\\s+")[1]).collect(Collectors.toList());
    assertEquals(2, scopes.size(), r.out);
    assertTrue(!scopes.get(0).equals(scopes.get(1)) && scopes.stream().noneMatch(s -> s.contains("?")),
        "two different operations must not print as the same row (each non-ASCII letter became '?'): " + scopes);
  }

  private record Run(int code, String out, String err) {}

  /** The CLI in a JVM of its own, in the POSIX ("C") locale, as cron or an exec into a bare image runs it. */
  private Run runInPosixLocale(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        ChildCli.HEAP, ChildCli.NATIVE_ACCESS, "-cp", System.getProperty("java.class.path"), IdemCli.class.getName()));
    cmd.addAll(List.of(args));
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.equals("LANG") || k.equals("LANGUAGE") || k.startsWith("LC_"));
    env.put("LC_ALL", "C");
    Process p = pb.start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("the CLI did not finish in 120 s");
    }
    // Bytes as the terminal gets them: ASCII, or UTF-8 if the CLI chose to keep the letters.
    return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
  }
}
