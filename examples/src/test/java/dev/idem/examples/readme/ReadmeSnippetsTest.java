package dev.idem.examples.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every {@code java} block of the README and of the pages in docs/ compiles against the current
 * API, so that the documentation
 * cannot drift from it. Each block is compiled with the preamble {@link ReadmePreambles} keeps
 * under its heading (or none); a block that does not compile fails with its README line and
 * javac's message. When a snippet fails, fix the README (or, if the snippet now assumes another
 * app-side name, its preamble), never this test's expectations.
 */
class ReadmeSnippetsTest {
  /**
   * Blocks known not to compile, by key, each with the reason. Empty: every block compiles. A block
   * listed here that compiles fails the test, so that the list cannot go stale.
   */
  private static final Map<String, String> KNOWN_FAILING = Map.of();

  @TestFactory
  Stream<DynamicTest> everyJavaBlockOfTheReadmeCompiles(@TempDir Path classes) throws Exception {
    List<ReadmeBlock> blocks = ReadmeBlocks.readAll();
    assertFalse(blocks.isEmpty(), "no ```java block found in README.md");
    Map<String, Preamble> preambles = ReadmePreambles.all();
    Map<ReadmeBlock, Preamble> toCompile = new LinkedHashMap<>();
    blocks.forEach(b -> toCompile.put(b, preambles.getOrDefault(b.key(), Preamble.NONE)));
    // The sources go to target/doc-snippets too: .ci/packaging-test compiles them again against
    // the published artifacts, as a separate project would.
    Path snippets = Path.of("target", "doc-snippets");
    Map<ReadmeBlock, List<String>> errors = SnippetCompiler.compile(toCompile, classes, snippets);
    writeThirdPartyClassPath(snippets.resolve("third-party.classpath"));
    return blocks.stream().map(block -> DynamicTest.dynamicTest(
        block.file() + " line " + block.firstLine() + " (" + block.key() + ")",
        () -> check(block, preambles.containsKey(block.key()), errors.get(block))));
  }

  /**
   * The jars of this test's class path that are not Idem's own (Jetty, Retrofit, Micrometer...),
   * one per line: with the published Idem artifacts, what the packaging test compiles the written
   * snippets against.
   */
  private static void writeThirdPartyClassPath(Path file) throws java.io.IOException {
    List<String> jars = java.util.Arrays.stream(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
        .filter(e -> e.endsWith(".jar"))
        .filter(e -> !e.replace('\\', '/').contains("/dev/idem/") && !e.replace('\\', '/').contains("/target/"))
        .toList();
    java.nio.file.Files.write(file, jars);
  }

  private static void check(ReadmeBlock block, boolean hasPreamble, List<String> errors) {
    String known = KNOWN_FAILING.get(block.key());
    if (known != null) {
      assertFalse(errors.isEmpty(), "the README block at line " + block.firstLine() + " (" + block.key()
          + ") compiles now: remove it from KNOWN_FAILING (" + known + ")");
      return;
    }
    if (!errors.isEmpty()) {
      fail("the java block of " + block.file() + " at line " + block.firstLine() + " (under \"" + block.key() + "\""
          + (hasPreamble ? ", with its preamble in ReadmePreambles" : ", which has no preamble in ReadmePreambles")
          + ") does not compile:\n" + String.join("\n", errors));
    }
  }

  /**
   * Issue 14: a quickstart needs at most five lines of setup before its first request. Issue 29:
   * the Spring Boot quickstart is a whole app, so it is held to what that issue asks instead: at
   * most one annotation or bean for each half (an {@code @Idempotent} for the guard, a
   * {@code @Bean} for the inbox, nothing for the client but Boot's own builder) and at most five
   * lines of properties.
   */
  @Test
  void eachQuickstartNeedsAtMostFiveLinesOfSetup() throws Exception {
    Path readme = ReadmeBlocks.locateReadme();
    List<String> text = java.nio.file.Files.readAllLines(readme);
    List<String> quickstarts = new java.util.ArrayList<>();
    for (ReadmeBlock b : ReadmeBlocks.read(readme)) {
      if (!b.key().startsWith("Quickstart")) {
        continue;
      }
      quickstarts.add(b.key());
      if (b.key().equals("Quickstart: Spring Boot")) {
        assertEquals(1, count(b, "@Idempotent"), b.key() + ": the guard is one annotation");
        assertEquals(1, count(b, "@Bean"), b.key() + ": the inbox is one bean");
        assertEquals(0, count(b, "IdempotencyInterceptor") + count(b, "IdempotencyExchangeFilter")
            + count(b, "IdempotentExecutor") + count(b, "Journal"),
            b.key() + ": the client needs no Idem bean or interceptor of the app's own");
        long properties = propertiesLines(text, b.key());
        assertTrue(properties >= 1 && properties <= 5, b.key() + ": " + properties + " lines of properties");
        continue;
      }
      // Setup: the lines that are not imports, before the first request is built or sent.
      long setup = b.lines().stream().map(String::strip).filter(l -> !l.isBlank() && !l.startsWith("import "))
          .takeWhile(l -> !l.startsWith("Request ") && !l.startsWith("HttpResponse")).count();
      assertTrue(setup <= 5, b.key() + " (README line " + b.firstLine() + "): " + setup + " lines of setup");
    }
    assertEquals(List.of("Quickstart: OkHttp and Retrofit", "Quickstart: java.net.http", "Quickstart: Spring Boot"),
        quickstarts);
  }

  private static long count(ReadmeBlock b, String word) {
    return b.lines().stream().filter(l -> !l.strip().startsWith("import ") && l.contains(word)).count();
  }

  /** The non-blank lines of the ```properties block under the heading {@code key}. */
  private static long propertiesLines(List<String> readme, String key) {
    int at = readme.indexOf("## " + key);
    assertTrue(at >= 0, "no heading " + key);
    long lines = 0;
    boolean in = false;
    for (int i = at + 1; i < readme.size() && !readme.get(i).startsWith("## "); i++) {
      String l = readme.get(i);
      if (l.equals("```properties")) {
        in = true;
      } else if (in && l.equals("```")) {
        return lines;
      } else if (in && !l.isBlank()) {
        lines++;
      }
    }
    return 0;
  }

  @Test
  void everyPreambleBelongsToABlockOfTheReadme() throws Exception {
    Set<String> keys = ReadmeBlocks.readAll().stream()
        .map(ReadmeBlock::key).collect(Collectors.toSet());
    Set<String> stale = new TreeSet<>(ReadmePreambles.all().keySet());
    stale.addAll(KNOWN_FAILING.keySet());
    stale.removeAll(keys);
    assertTrue(stale.isEmpty(), "preambles or KNOWN_FAILING entries for headings with no java block"
        + " (a heading renamed? a block moved?): " + stale);
  }

  @Test
  void onlyJavaFencesAreExtractedAndKeyedByTheirHeading() {
    List<ReadmeBlock> blocks = ReadmeBlocks.parse(List.of(
        "# Title",                  // 1
        "```xml",                   // 2
        "<dependency/>",            // 3
        "```",                      // 4
        "## Usage",                 // 5
        "```java",                  // 6
        "int a = 1;",               // 7
        "```",                      // 8
        "```",                      // 9
        "java -jar x.jar",          // 10
        "```",                      // 11
        "```java",                  // 12
        "// # not a heading",       // 13
        "int b = 2;",               // 14
        "```"));                    // 15
    assertEquals(List.of(
        new ReadmeBlock("Usage", 7, List.of("int a = 1;")),
        new ReadmeBlock("Usage #2", 13, List.of("// # not a heading", "int b = 2;"))), blocks);
  }

  /** The test can fail: a snippet calling a method that does not exist is reported at its line. */
  @Test
  void aSnippetThatDoesNotMatchTheApiFailsWithItsReadmeLineAndJavacsMessage(@TempDir Path classes) {
    List<ReadmeBlock> blocks = ReadmeBlocks.parse(List.of(
        "## Broken",                                        // 1
        "```java",                                          // 2
        "import dev.idem.core.IdempotentExecutor;",         // 3
        "",                                                 // 4
        "IdempotentExecutor e = IdempotentExecutor.builder()", // 5
        "    .noSuchOption(true)",                          // 6
        "    .build();",                                    // 7
        "```",
        "## Missing semicolon",                             // 9
        "```java",                                          // 10
        "int x = 1",                                        // 11
        "```",
        "## Fine",                                          // 13
        "```java",                                          // 14
        "import dev.idem.core.IdempotentExecutor;",         // 15
        "IdempotentExecutor e = IdempotentExecutor.builder().build();", // 16
        "```",
        "## Unknown name, after another block's syntax error", // 18
        "```java",                                          // 19
        "journal.close();",                                 // 20
        "```"));
    Map<ReadmeBlock, Preamble> toCompile = new LinkedHashMap<>();
    blocks.forEach(b -> toCompile.put(b, Preamble.NONE));
    Map<ReadmeBlock, List<String>> errors = SnippetCompiler.compile(toCompile, classes);

    List<String> broken = errors.get(blocks.get(0));
    assertEquals(1, broken.size(), broken.toString());
    assertTrue(broken.get(0).startsWith("README.md line 6: cannot find symbol"), broken.get(0));
    assertTrue(broken.get(0).contains("noSuchOption"), broken.get(0));
    List<String> semicolon = errors.get(blocks.get(1));
    assertEquals(1, semicolon.size(), semicolon.toString());
    assertTrue(semicolon.get(0).startsWith("README.md line 11: ';' expected"), semicolon.get(0));
    assertEquals(List.of(), errors.get(blocks.get(2)));
    // One block's syntax error must not stop javac from checking the others.
    List<String> unknown = errors.get(blocks.get(3));
    assertEquals(1, unknown.size(), unknown.toString());
    assertTrue(unknown.get(0).startsWith("README.md line 20: cannot find symbol"), unknown.get(0));
  }
}
