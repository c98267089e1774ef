package dev.idem.core.support;

import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.ArrayList;
import java.util.List;
import org.quicktheories.QuickTheory;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * QuickTheories set up the way this project's properties run: a fixed seed by default, so the suite
 * is deterministic, and generators that hit bounds and chosen edge values more often than chance
 * (the old seeded trials did the same by hand). A failure is shrunk to a small case and reported with
 * its seed. {@code -Didem.seed=<n>} explores another region, {@code -Didem.seed=random} a fresh one
 * per run; {@code -Didem.examples.factor=<n>} multiplies every property's example count.
 */
public final class Props {
  private static final long DEFAULT_SEED = 0x1de3_5eedL;

  private Props() {}

  /** A theory of {@code examples} examples (times the factor) on the configured seed. */
  public static QuickTheory qt(int examples) {
    return QuickTheory.qt().withFixedSeed(seed()).withExamples(examples * factor());
  }

  private static long seed() {
    String s = System.getProperty("idem.seed");
    if (s == null || s.isBlank()) {
      return DEFAULT_SEED;
    }
    return s.equals("random") ? System.nanoTime() : Long.parseLong(s.trim());
  }

  private static int factor() {
    return Integer.getInteger("idem.examples.factor", 1);
  }

  /** Longs in [min, max]; one draw in five is min, max or one of {@code edges}. Shrinks towards min. */
  public static Gen<Long> longsWithEdges(long min, long max, long... edges) {
    List<Long> special = new ArrayList<>(List.of(min, max));
    for (long e : edges) {
      if (e >= min && e <= max) {
        special.add(e);
      }
    }
    return longs().between(min, max).mix(Generate.pick(special), 20);
  }

  /** Integers in [min, max]; one draw in five is min, max or one of {@code edges}. Shrinks towards min. */
  public static Gen<Integer> intsWithEdges(int min, int max, int... edges) {
    List<Integer> special = new ArrayList<>(List.of(min, max));
    for (int e : edges) {
      if (e >= min && e <= max) {
        special.add(e);
      }
    }
    return integers().between(min, max).mix(Generate.pick(special), 20);
  }

  /** Doubles in [min, max], bounds included more often than chance. */
  public static Gen<Double> doublesBetween(double min, double max) {
    return doubles().between(min, max).mix(Generate.pick(List.of(min, max)), 20);
  }

  /** Uniform values in [0, 1) for jitter, with 0 and the largest double below 1 more often. */
  public static Gen<Double> unit() {
    double top = Math.nextDown(1.0);
    return doubles().between(0.0, top).mix(Generate.pick(List.of(0.0, top)), 10);
  }

  /** True with probability {@code percent} / 100. */
  public static Gen<Boolean> chance(int percent) {
    return integers().between(0, 99).map(i -> i < percent);
  }
}
