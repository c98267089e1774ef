package dev.idem.examples.readme;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Extracts the fenced {@code java} blocks of a Markdown text; other fences (xml, shell) are skipped. */
final class ReadmeBlocks {
  private ReadmeBlocks() {}

  /**
   * The README of this checkout: the first README.md found walking up from the working directory
   * next to an {@code sdk-core} folder (surefire runs in examples/, the IDE maybe at the root).
   */
  static Path locateReadme() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      Path readme = dir.resolve("README.md");
      if (Files.isRegularFile(readme) && Files.isDirectory(dir.resolve("sdk-core"))) {
        return readme;
      }
    }
    throw new IllegalStateException("no README.md beside sdk-core above " + Path.of("").toAbsolutePath());
  }

  static List<ReadmeBlock> read(Path readme) throws IOException {
    return parse(Files.readAllLines(readme));
  }

  /**
   * The java blocks of README.md and of every page in docs/, README's first. A docs block's key
   * is prefixed with its file ("docs/client.md: A timeout per attempt").
   */
  static List<ReadmeBlock> readAll() throws IOException {
    Path readme = locateReadme();
    List<ReadmeBlock> all = new ArrayList<>(read(readme));
    Path docs = readme.getParent().resolve("docs");
    List<Path> pages;
    try (java.util.stream.Stream<Path> s = Files.list(docs)) {
      pages = s.filter(p -> p.getFileName().toString().endsWith(".md")).sorted().toList();
    }
    for (Path page : pages) {
      String file = "docs/" + page.getFileName();
      for (ReadmeBlock b : parse(Files.readAllLines(page))) {
        all.add(new ReadmeBlock(file, file + ": " + b.key(), b.firstLine(), b.lines()));
      }
    }
    return all;
  }

  /**
   * @throws IllegalArgumentException if a fence is left open, so that a broken README cannot hide
   *     its last blocks from the test
   */
  static List<ReadmeBlock> parse(List<String> markdown) {
    List<ReadmeBlock> blocks = new ArrayList<>();
    Map<String, Integer> perHeading = new HashMap<>();
    String heading = "(before any heading)";
    String fence = null;
    int start = 0;
    List<String> code = null;
    for (int i = 0; i < markdown.size(); i++) {
      String line = markdown.get(i);
      String trimmed = line.strip();
      if (fence == null) {
        if (trimmed.startsWith("```")) {
          fence = trimmed.substring(3).strip();
          start = i + 2; // the README line number of the first code line
          code = new ArrayList<>();
        } else if (line.startsWith("#")) {
          heading = line.replaceFirst("^#+\\s*", "").strip();
        }
      } else if (trimmed.equals("```")) {
        if (fence.equals("java")) {
          int n = perHeading.merge(heading, 1, Integer::sum);
          blocks.add(new ReadmeBlock(n == 1 ? heading : heading + " #" + n, start, code));
        }
        fence = null;
      } else {
        code.add(line);
      }
    }
    if (fence != null) {
      throw new IllegalArgumentException("README line " + (start - 1) + ": fence ```" + fence + " is never closed");
    }
    return blocks;
  }
}
