package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a host whose locale is Persian, Arabic, Bengali, Marathi, Nepali or Burmese ({@code
 * LANG=fa_IR.UTF-8}, {@code ar_EG.UTF-8}, ...: the JVM takes {@code user.language} and
 * {@code user.country} from it), the CLI prints the numbers it formats with {@code printf("%d")} in
 * that locale's digits: {@code journal stats} prints {@code PENDING    ۱۲}, {@code list} prints
 * {@code attempts=۰}, while the same output's other numbers, built by string concatenation ({@code
 * "12 operation(s)"}) or {@code Instant.toString}, stay ASCII. A monitoring script ({@code idem
 * journal stats --dir D | awk '$1=="FAILED" && $2>0'}) reads {@code ۱۲} as 0 and never alerts; the
 * operator sees two digit systems in one listing. The formats are in {@code StatsCommand},
 * {@code RecordPrinter.line}/{@code detail}, {@code WebhooksCommand} ({@code attempts=%d}, stats)
 * and {@code GuardCommand} ({@code gen=%d}, stats): each uses {@code PrintWriter.printf} without a
 * locale, i.e. {@code Locale.getDefault(FORMAT)}; an operators' tool printing counts should print
 * them as {@code Locale.ROOT} does.
 *
 * <p>The locale is given to the child JVM as system properties, as the JVM sets them from
 * {@code LANG} where that locale is installed.
 */
class RvRcliLocaleDigitsTest {
  @TempDir
  Path dir;

  @Test
  void countsPrintInAsciiDigitsWhateverTheHostLocale() throws Exception {
    Path journal = dir.resolve("journal");
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
      for (int i = 0; i < 12; i++) {
        j.begin(new NewOperation(new OperationId("acme", "create-order", IdempotencyKey.of("k-" + i)), null,
            Fingerprinter.defaults().fingerprint(snap), snap, Instant.now()));
      }
    }

    Run stats = runInLocale("fa", "IR", "journal", "stats", "--dir", journal.toString());
    Run list = runInLocale("fa", "IR", "journal", "list", "--dir", journal.toString(), "--limit", "1");

    assertEquals(0, stats.code, stats.err);
    assertEquals(0, list.code, list.err);
    assertAll(
        () -> assertTrue(stats.out.lines().anyMatch(l -> l.matches("PENDING +12")),
            "stats counts 12 PENDING operations in digits a script reads:\n" + stats.out),
        () -> assertTrue(list.out.contains("attempts=0 "), "list prints attempts=0:\n" + list.out),
        () -> assertTrue(list.out.contains("1 of 12 operation(s) shown"), list.out));
  }

  private record Run(int code, String out, String err) {}

  /** The CLI in a JVM of its own whose default locale is {@code language_COUNTRY}, output in UTF-8. */
  private Run runInLocale(String language, String country, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        ChildCli.HEAP, ChildCli.NATIVE_ACCESS, "-Duser.language=" + language, "-Duser.country=" + country,
        "-Dstdout.encoding=UTF-8", "-Dstderr.encoding=UTF-8", "-cp", System.getProperty("java.class.path"),
        IdemCli.class.getName()));
    cmd.addAll(List.of(args));
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("the CLI did not finish in 120 s");
    }
    return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }
}
