package dev.idem.core.support;

import java.util.List;
import java.util.SplittableRandom;

/**
 * Runs a randomized property many times with plain JUnit: each trial gets its own seeded random
 * source, and a failure names the seed that reproduces it. The base seed is fixed by default so the
 * suite is deterministic; pass {@code -Didem.seed=<n>} to explore another region, or
 * {@code -Didem.seed=random} for a fresh one per run (the failure message prints it).
 */
public final class Trials {
  private static final long DEFAULT_SEED = 0x1de3_5eedL;

  private Trials() {}

  /** One trial's source of randomness, with a few generators the properties share. */
  public static final class Gen {
    private final SplittableRandom random;
    public final long seed;

    Gen(long seed) {
      this.seed = seed;
      this.random = new SplittableRandom(seed);
    }

    public int intBetween(int min, int max) {
      return max == Integer.MAX_VALUE && min == Integer.MIN_VALUE ? random.nextInt()
          : (int) longBetween(min, max);
    }

    public long longBetween(long min, long max) {
      if (max == Long.MAX_VALUE) {
        long r = random.nextLong(min, max);
        return random.nextInt(50) == 0 ? max : r;
      }
      return random.nextLong(min, max + 1);
    }

    /** Like {@link #intBetween}, but hits the bounds (and a few given values) more often than chance. */
    public int intWithEdges(int min, int max, int... edges) {
      return (int) longWithEdges(min, max, java.util.Arrays.stream(edges).asLongStream().toArray());
    }

    /** Like {@link #longBetween}, but hits the bounds (and a few given values) more often than chance. */
    public long longWithEdges(long min, long max, long... edges) {
      int roll = random.nextInt(10);
      if (roll == 0) {
        return min;
      }
      if (roll == 1) {
        return max;
      }
      if (roll == 2 && edges.length > 0) {
        return edges[random.nextInt(edges.length)];
      }
      return longBetween(min, max);
    }

    public double unit() {
      int roll = random.nextInt(20);
      if (roll == 0) {
        return 0.0;
      }
      if (roll == 1) {
        return Math.nextDown(1.0);
      }
      return random.nextDouble();
    }

    public double doubleBetween(double min, double max) {
      int roll = random.nextInt(10);
      if (roll == 0) {
        return min;
      }
      if (roll == 1) {
        return max;
      }
      return min + random.nextDouble() * (max - min);
    }

    public boolean chance(double p) {
      return random.nextDouble() < p;
    }

    public <T> T oneOf(List<T> values) {
      return values.get(random.nextInt(values.size()));
    }

    @SafeVarargs
    public final <T> T oneOf(T... values) {
      return values[random.nextInt(values.length)];
    }

    /** A fresh seed for a component under test (a jitter source, say). */
    public long nextSeed() {
      return random.nextLong();
    }
  }

  /** What one trial checks; it may throw anything. */
  @FunctionalInterface
  public interface Property {
    void check(Gen gen) throws Exception;
  }

  /** Runs {@code tries} trials of {@code property}; a failure is rethrown naming its seed. */
  public static void run(int tries, Property property) {
    long base = baseSeed();
    SplittableRandom seeds = new SplittableRandom(base);
    for (int i = 0; i < tries; i++) {
      long seed = seeds.nextLong();
      try {
        property.check(new Gen(seed));
      } catch (Throwable t) {
        AssertionError e = new AssertionError("property failed on trial " + (i + 1) + " of " + tries
            + " (base seed " + base + ", trial seed " + seed + "; rerun with Trials.replay(" + seed + "L, ...)): "
            + t, t);
        throw e;
      }
    }
  }

  /** Re-runs one trial by its seed, for debugging a failure. */
  public static void replay(long seed, Property property) throws Exception {
    property.check(new Gen(seed));
  }

  private static long baseSeed() {
    String s = System.getProperty("idem.seed");
    if (s == null || s.isBlank()) {
      return DEFAULT_SEED;
    }
    if (s.equals("random")) {
      return System.nanoTime();
    }
    return Long.parseLong(s.trim());
  }
}
