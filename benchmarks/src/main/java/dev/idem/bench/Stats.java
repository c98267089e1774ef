package dev.idem.bench;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/** Small measurement helpers shared by the benchmark's parts. */
final class Stats {
  private Stats() {
  }

  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  /** The load average line of /proc/loadavg, or "unknown": the machines are shared, so every run prints it. */
  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).strip();
    } catch (IOException e) {
      return "unknown";
    }
  }

  /**
   * The median time, in µs, of {@code n} fsyncs of a 256-byte write to {@code file}, on the journal's
   * disk; measured exactly as the journal benchmark (persistence) does, so the two compare.
   */
  static double fsyncMicros(Path file, int n) throws IOException {
    double[] t = new double[n];
    ByteBuffer block = ByteBuffer.allocate(256);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      for (int i = 0; i < n; i++) {
        block.clear();
        long start = System.nanoTime();
        ch.write(block, 0);
        ch.force(false);
        t[i] = (System.nanoTime() - start) / 1_000.0;
      }
    }
    Files.deleteIfExists(file);
    return median(t);
  }
}
