package dev.idem.testkit;

import dev.idem.server.FingerprintMode;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs the {@link IdempotentServer reference server} as a program, outside JUnit: for manual tests,
 * demos, and clients written in other languages. It prints the address it listens on, serves until
 * stopped (Ctrl-C or SIGTERM), then prints how many requests and effects it saw, per key.
 *
 * <pre>
 * # from a clone of the repository
 * mvn -B -q -pl sdk-testkit -am compile -Preference-server -Didem.server.args="--port 8080"
 *
 * # from the test kit's jar and its runtime class path
 * java -cp "idem-sdk-testkit.jar:..." dev.idem.testkit.IdempotentServerMain --port 8080 --mismatch-status 409
 *
 * idem reference server listening on http://127.0.0.1:8080/ (Ctrl-C stops it)
 * </pre>
 *
 * <p>Any path accepts requests. A POST or PATCH needs an {@code Idempotency-Key}; the first
 * request of a key runs the effect once and answers 201 with {@code {"id":"ord_<n>","effect":<n>,
 * "key":"<key>"}}; a repeat gets the stored answer with {@code Idempotent-Replayed: true}, 409
 * while the first still runs, and 422 for the same key with another body. The flags choose the
 * flavour of server to play, as {@link IdempotentServer.Builder} does:
 *
 * <table>
 *   <caption>Flags (all optional)</caption>
 *   <tr><th>flag</th><th>default</th><th>builder setting</th></tr>
 *   <tr><td>{@code --port N}</td><td>0, any free port</td><td>{@link IdempotentServer.Builder#port}</td></tr>
 *   <tr><td>{@code --key-header NAME}</td><td>{@code Idempotency-Key}</td><td>{@link IdempotentServer.Builder#keyHeader}</td></tr>
 *   <tr><td>{@code --caller-header NAME}</td><td>{@code X-Caller}</td><td>{@link IdempotentServer.Builder#callerHeader}</td></tr>
 *   <tr><td>{@code --mismatch-status N}</td><td>422</td><td>{@link IdempotentServer.Builder#mismatchStatus}</td></tr>
 *   <tr><td>{@code --in-flight-retry-after SECONDS}</td><td>1</td><td>{@link IdempotentServer.Builder#inFlightRetryAfter}</td></tr>
 *   <tr><td>{@code --no-in-flight-retry-after}</td><td>send it</td><td>{@link IdempotentServer.Builder#sendInFlightRetryAfter}</td></tr>
 *   <tr><td>{@code --no-replay-marker}</td><td>mark replays</td><td>{@link IdempotentServer.Builder#replayMarker}</td></tr>
 *   <tr><td>{@code --store-server-errors}</td><td>5xx not stored</td><td>{@link IdempotentServer.Builder#storeServerErrors}</td></tr>
 *   <tr><td>{@code --fingerprint raw-bytes}</td><td>{@code canonical-json}</td><td>{@link IdempotentServer.Builder#fingerprintMode}</td></tr>
 *   <tr><td>{@code --max-body-size BYTES}</td><td>1048576 (1 MiB)</td><td>{@link IdempotentServer.Builder#maxBodySize}</td></tr>
 * </table>
 *
 * <p>Exit status: 0 after a normal stop (Ctrl-C or SIGTERM, once the summary is printed), 2 on bad
 * usage (the message says which flag), 1 if the port cannot be bound. To exit 0 rather than the
 * JVM's 130 or 143 for the signal, the program halts the JVM at the end of its shutdown hook, so
 * shutdown hooks of other code in the same JVM (an agent, a logging back end on the class path)
 * may be cut short; if closing the server takes longer than 5 seconds, the JVM exits with the
 * signal's status instead. The server listens on the loopback address only.
 */
public final class IdempotentServerMain {
  /** How long the shutdown hook waits for the server to stop and print its summary. */
  private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(5);
  /** Keys listed one by one in the summary; the rest are counted. */
  static final int KEYS_SHOWN = 20;

  static final String USAGE = String.join("\n",
      "usage: IdempotentServerMain [--port N] [--key-header NAME] [--caller-header NAME]",
      "         [--mismatch-status 4xx] [--in-flight-retry-after SECONDS | --no-in-flight-retry-after]",
      "         [--no-replay-marker] [--store-server-errors] [--fingerprint canonical-json|raw-bytes]",
      "         [--max-body-size BYTES]",
      "Runs Idem's reference idempotent server on 127.0.0.1 until Ctrl-C (port 0: any free port).");

  private IdempotentServerMain() {}

  /**
   * Starts the server with the flags in {@code args} and serves until the JVM is stopped.
   *
   * @param args the flags listed in the class documentation
   * @throws InterruptedException if the main thread is interrupted while serving
   */
  public static void main(String[] args) throws InterruptedException {
    CountDownLatch stop = new CountDownLatch(1);
    CountDownLatch finished = new CountDownLatch(1);
    // Set once the server stopped serving because the hook asked it to, and run() then returned 0.
    AtomicBoolean stoppedNormally = new AtomicBoolean();
    // Ctrl-C and SIGTERM run this hook; it lets run() close the server and print its summary
    // before the JVM halts.
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stop.countDown();
      boolean done;
      try {
        done = finished.await(SHUTDOWN_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (done && stoppedNormally.get()) {
        // Ctrl-C and SIGTERM are this program's normal stop, yet a JVM stopped by a signal exits
        // 128 + the signal (130, 143), and a hook cannot change that but by halting. Halting
        // skips the hooks still running and the JVM's own deleteOnExit hook: this program
        // registers no other hook and deletes no file on exit, and the summary is already
        // printed and flushed. A stop that did not finish in time keeps the signal's status.
        System.out.flush();
        System.err.flush();
        Runtime.getRuntime().halt(0);
      }
    }, "idem-reference-server-stop"));
    int code;
    try {
      code = run(args, System.out, System.err, server -> stop.await());
      stoppedNormally.set(code == 0 && stop.getCount() == 0);
    } finally {
      finished.countDown();
    }
    if (code != 0) {
      System.exit(code);
    }
  }

  /** Blocks while the server serves; returning stops it. */
  @FunctionalInterface
  interface Serving {
    void serve(IdempotentServer server) throws InterruptedException;
  }

  /**
   * Parses {@code args}, starts the server, prints its address on {@code out}, lets
   * {@code serving} block, then closes the server and prints the summary.
   *
   * @return the exit status: 0, 1 if the server could not start, 2 on bad usage
   */
  static int run(String[] args, PrintStream out, PrintStream err, Serving serving) throws InterruptedException {
    IdempotentServer.Builder builder;
    try {
      builder = parse(args);
    } catch (IllegalArgumentException e) {
      err.println("IdempotentServerMain: " + e.getMessage());
      err.println(USAGE);
      return 2;
    }
    if (builder == null) {
      out.println(USAGE);
      return 0;
    }
    IdempotentServer server;
    try {
      server = builder.start();
    } catch (java.io.UncheckedIOException e) {
      err.println("IdempotentServerMain: " + e.getMessage());
      return 1;
    }
    try (server) {
      out.println("idem reference server listening on " + server.url("/") + " (Ctrl-C stops it)");
      out.flush();
      serving.serve(server);
    }
    out.println(summary(server));
    out.flush();
    return 0;
  }

  /** The builder the flags describe, or null for --help. */
  static IdempotentServer.Builder parse(String... args) {
    IdempotentServer.Builder b = IdempotentServer.builder();
    Deque<String> rest = new ArrayDeque<>(List.of(args));
    while (!rest.isEmpty()) {
      String flag = rest.pop();
      switch (flag) {
        case "--help", "-h" -> {
          return null;
        }
        case "--port" -> b.port(number(flag, rest));
        case "--key-header" -> b.keyHeader(value(flag, rest));
        case "--caller-header" -> b.callerHeader(value(flag, rest));
        case "--mismatch-status" -> b.mismatchStatus(number(flag, rest));
        case "--in-flight-retry-after" -> b.inFlightRetryAfter(Duration.ofSeconds(number(flag, rest)));
        case "--no-in-flight-retry-after" -> b.sendInFlightRetryAfter(false);
        case "--no-replay-marker" -> b.replayMarker(false);
        case "--store-server-errors" -> b.storeServerErrors(true);
        case "--fingerprint" -> b.fingerprintMode(fingerprint(value(flag, rest)));
        case "--max-body-size" -> b.maxBodySize(longNumber(flag, rest));
        default -> throw new IllegalArgumentException("unknown flag " + flag);
      }
    }
    return b;
  }

  private static String value(String flag, Deque<String> rest) {
    if (rest.isEmpty() || rest.peek().startsWith("--")) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return rest.pop();
  }

  private static int number(String flag, Deque<String> rest) {
    String v = value(flag, rest);
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " takes a whole number, not " + v);
    }
  }

  // Parsed as the builder's long, so that a number too large for it gets the builder's message
  // (its range) rather than "not a whole number".
  private static long longNumber(String flag, Deque<String> rest) {
    String v = value(flag, rest);
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " takes a whole number, not " + v);
    }
  }

  private static FingerprintMode fingerprint(String v) {
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "canonical-json" -> FingerprintMode.CANONICAL_JSON;
      case "raw-bytes" -> FingerprintMode.RAW_BYTES;
      default -> throw new IllegalArgumentException("--fingerprint is canonical-json or raw-bytes, not " + v);
    };
  }

  /** What the server saw: requests, effects, and the effects per key (the first few keys). */
  static String summary(IdempotentServer server) {
    StringBuilder s = new StringBuilder("stopped after " + server.requestCount() + " request(s) and "
        + server.totalEffects() + " effect(s)");
    Set<String> keys = server.keysSeen();
    keys.stream().limit(KEYS_SHOWN)
        .forEach(key -> s.append("\n  key ").append(key).append(": ").append(server.effectCount(key)).append(" effect(s)"));
    if (keys.size() > KEYS_SHOWN) {
      s.append("\n  ... and ").append(keys.size() - KEYS_SHOWN).append(" more key(s)");
    }
    return s.toString();
  }
}
