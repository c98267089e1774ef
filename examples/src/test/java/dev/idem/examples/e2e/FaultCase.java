package dev.idem.examples.e2e;

import dev.idem.testkit.Fault;
import java.time.Duration;
import java.util.List;

/**
 * Every fault of the test kit, with what a keyed client must see: how many requests carry the key,
 * and whether the answer it ends with is the server's replay (the effect ran on an earlier request
 * whose answer was lost) or the first and only run.
 *
 * @param fault the fault for the first request, or null for none
 * @param requests requests the server receives with the key
 * @param replayedAtEnd whether the client's final answer is a replay
 */
record FaultCase(String name, Fault fault, int requests, boolean replayedAtEnd) {
  /** Longer than the clients' read timeout, so a delayed response is lost to them. */
  static final Duration DELAY = Duration.ofMillis(1500);
  static final Duration CLIENT_TIMEOUT = Duration.ofMillis(400);

  static List<FaultCase> all() {
    return List.of(
        new FaultCase("no fault", null, 1, false),
        new FaultCase("dropRequest", Fault.dropRequest(), 2, false),
        new FaultCase("commitThenDropResponse", Fault.commitThenDropResponse(), 2, true),
        new FaultCase("commitThenDelayResponse", Fault.commitThenDelayResponse(DELAY), 2, true),
        new FaultCase("commitThenStatus(500)", Fault.commitThenStatus(500), 2, true),
        new FaultCase("commitThenStatus(503)", Fault.commitThenStatus(503), 2, true),
        new FaultCase("status(503)", Fault.status(503), 2, false),
        new FaultCase("status(502)", Fault.status(502), 2, false),
        new FaultCase("tooManyRequests", Fault.tooManyRequests(Duration.ZERO), 2, false),
        new FaultCase("tooManyRequestsUntil", Fault.tooManyRequestsUntil(Duration.ZERO), 2, false),
        new FaultCase("slowProcessing", Fault.slowProcessing(Duration.ofMillis(200)), 1, false));
  }

  @Override
  public String toString() {
    return name;
  }
}
