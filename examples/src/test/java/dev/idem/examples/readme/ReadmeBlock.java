package dev.idem.examples.readme;

import java.util.List;

/**
 * One fenced {@code java} block of the README or of a page in docs/.
 *
 * @param file where the block is, relative to the repository root: {@code README.md} or
 *     {@code docs/client.md}
 * @param key the nearest heading above the block (prefixed with the file and ": " outside README.md), with {@code " #2"}, {@code " #3"}... for a
 *     second or later block under the same heading: the stable name its preamble is kept under
 * @param firstLine the README line number (1-based) of the block's first code line
 * @param lines the code lines, without the fences
 */
record ReadmeBlock(String file, String key, int firstLine, List<String> lines) {
  ReadmeBlock {
    lines = List.copyOf(lines);
  }

  /** A block of README.md itself. */
  ReadmeBlock(String key, int firstLine, List<String> lines) {
    this("README.md", key, firstLine, lines);
  }
}
