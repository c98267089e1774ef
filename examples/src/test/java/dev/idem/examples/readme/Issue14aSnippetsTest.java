package dev.idem.examples.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README text of issue 14A ({@code docs/readme-issue-14a.md}, to be merged into README.md)
 * compiles as written: each block brings its own imports; the preamble only names what the app
 * owns ({@code dir}, {@code url}, {@code json}, {@code request}, {@code token}).
 */
class Issue14aSnippetsTest {
  private static final Preamble APP_NAMES = Preamble.statements(List.of(), List.of(
      "java.nio.file.Path dir;",
      "String url;",
      "String json;",
      "String token;",
      "java.net.http.HttpRequest request;"));

  @Test
  void everyJavaBlockCompiles(@TempDir Path classes) throws Exception {
    Path doc = ReadmeBlocks.locateReadme().resolveSibling("docs").resolve("readme-issue-14a.md");
    List<ReadmeBlock> blocks = ReadmeBlocks.parse(Files.readAllLines(doc));
    assertEquals(4, blocks.size(), "two quickstarts and two queued-delivery snippets: " + blocks);
    Map<ReadmeBlock, Preamble> toCompile = new LinkedHashMap<>();
    blocks.forEach(b -> toCompile.put(b, APP_NAMES));
    Map<ReadmeBlock, List<String>> errors = SnippetCompiler.compile(toCompile, classes);
    for (ReadmeBlock b : blocks) {
      assertTrue(errors.get(b).isEmpty(), "docs/readme-issue-14a.md block at line " + b.firstLine() + " ("
          + b.key() + "): " + errors.get(b));
    }
  }

  @Test
  void quickstartsNeedAtMostFiveLinesOfSetup() throws Exception {
    Path doc = ReadmeBlocks.locateReadme().resolveSibling("docs").resolve("readme-issue-14a.md");
    for (ReadmeBlock b : ReadmeBlocks.parse(Files.readAllLines(doc))) {
      if (b.key().startsWith("Quickstart")) {
        // Setup: the non-import lines before the first request is built or sent.
        long setup = b.lines().stream().filter(l -> !l.isBlank() && !l.startsWith("import "))
            .takeWhile(l -> !l.startsWith("Request ") && !l.startsWith("HttpResponse")).count();
        assertTrue(setup <= 5, b.key() + ": " + setup + " lines of setup");
      }
    }
  }
}
