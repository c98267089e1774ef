package dev.idem.examples.exit;

import dev.idem.core.RetryPolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The arguments of the exit tests' apps, written by the parent test and read by the child: which
 * phase to run (send the orders, or resume after a restart), how main ends, the journal
 * directory, the target's URL, how many orders, the file the app appends each confirmed order's
 * key to, and how long the outbox app waits for outcomes.
 */
record AppArgs(boolean resume, MainEnding ending, Path dir, String url, int orders, Path confirmations,
    Duration awaitOutcomes) {
  /** The operation name of every order, as in the README. */
  static final String OPERATION = "create-order";

  /**
   * Short backoff, so that a run with the target down takes a fraction of a second. Two attempts
   * for each of at most 5 orders stay within the circuit breaker's minimum of 10 counted attempts,
   * so the breaker never decides an outcome here (it would turn FAILED into PENDING by timing).
   */
  static final RetryPolicy POLICY = RetryPolicy.builder().maxAttempts(2).baseDelay(Duration.ofMillis(20))
      .maxDelay(Duration.ofMillis(100)).build();

  static AppArgs parse(String[] a) {
    return new AppArgs(a[0].equals("resume"), MainEnding.valueOf(a[1]), Path.of(a[2]), a[3], Integer.parseInt(a[4]),
        Path.of(a[5]), Duration.ofMillis(Long.parseLong(a[6])));
  }

  List<String> toList() {
    return List.of(resume ? "resume" : "send", ending.name(), dir.toString(), url, Integer.toString(orders),
        confirmations.toString(), Long.toString(awaitOutcomes.toMillis()));
  }

  /** The JSON body of order {@code n}. */
  static String json(int n) {
    return "{\"order\":" + n + ",\"amount\":\"12.50\"}";
  }
}
