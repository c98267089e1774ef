package dev.idem.bench;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;
import java.util.concurrent.TimeUnit;

/**
 * One Idem row in a JVM of its own, recorded with JFR's "profile" settings after a warm-up, so that
 * the recording holds the client's steady state only (the server runs in the parent). Prints one
 * {@code RESULT} line with the calls made while recording.
 *
 * <p>Arguments: server URL, row ({@code memory} or {@code durable}), threads, milliseconds,
 * working directory, recording file.
 */
public final class ProfileChild {
  /** The warm-up on 1 thread before the recording's own load. */
  private static final long WARMUP_ONE_THREAD_MILLIS = 10_000;

  private ProfileChild() {
  }

  /**
   * Warms up, records and prints the RESULT line.
   *
   * @param args server URL, row, threads, milliseconds, working directory, recording file
   * @throws Exception if a call fails or the recording cannot be written
   */
  public static void main(String[] args) throws Exception {
    URI url = URI.create(args[0]);
    boolean durable = args[1].equals("durable");
    int threads = Integer.parseInt(args[2]);
    long millis = Long.parseLong(args[3]);
    Path work = Path.of(args[4]);
    Path recordingFile = Path.of(args[5]);
    OkHttpClient base = new OkHttpClient.Builder()
        .connectionPool(new ConnectionPool(threads + 8, 5, TimeUnit.MINUTES)).build();
    Strategy strategy = durable ? Strategies.idemDurable(base, url) : Strategies.idemInMemory(base, url);
    Files.createDirectories(work);
    try (Strategy.Session warm = strategy.open(Files.createTempDirectory(work, "warm"))) {
      // Mostly on 1 thread, where the compiler has a core of its own: under 32 callers on 2
      // cores it is starved for a minute, and a recording taken while it still compiles splits
      // the compiler's work and the interpreter's, not the compiled code's.
      Load.run(warm, 1, WARMUP_ONE_THREAD_MILLIS);
      Load.run(warm, threads, Math.min(millis, 3000));
    }
    try (Strategy.Session session = strategy.open(Files.createTempDirectory(work, "run"));
        Recording recording = new Recording(Configuration.getConfiguration("profile"))) {
      // Lock waits of a millisecond or more: where 32 callers queue, if they do.
      recording.enable("jdk.JavaMonitorEnter").withThreshold(java.time.Duration.ofMillis(1));
      recording.enable("jdk.ThreadPark").withThreshold(java.time.Duration.ofMillis(1));
      recording.start();
      Load.Run run = Load.run(session, threads, millis);
      recording.stop();
      recording.dump(recordingFile);
      System.out.printf(Locale.ROOT, "RESULT calls=%d seconds=%.2f microsPerCall=%.1f callsPerSecond=%.0f"
          + " cpuMicrosPerCall=%.1f%n", run.calls(), run.nanos() / 1e9, run.microsPerCall(), run.callsPerSecond(),
          run.cpuMicrosPerCall());
    }
    base.connectionPool().evictAll();
    base.dispatcher().executorService().shutdown();
  }
}
