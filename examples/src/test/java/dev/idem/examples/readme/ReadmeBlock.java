package dev.idem.examples.readme;

import java.util.List;

/**
 * One fenced {@code java} block of the README.
 *
 * @param key the nearest heading above the block, with {@code " #2"}, {@code " #3"}... for a
 *     second or later block under the same heading: the stable name its preamble is kept under
 * @param firstLine the README line number (1-based) of the block's first code line
 * @param lines the code lines, without the fences
 */
record ReadmeBlock(String key, int firstLine, List<String> lines) {
  ReadmeBlock {
    lines = List.copyOf(lines);
  }
}
