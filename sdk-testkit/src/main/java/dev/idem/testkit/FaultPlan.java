package dev.idem.testkit;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.http.KeyHeader;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The script of faults for the requests a server will receive. Each scheduled fault is used by
 * exactly one request, in the order scheduled; a request with nothing scheduled for it is handled
 * normally.
 *
 * <p>There are two queues. Faults scheduled {@linkplain #forKey(String, Fault) for a key} go to the
 * next requests carrying that key (quoted or bare, it is the same key: the plan reads the key it is
 * given with the parser the server reads request headers with) and take precedence; the
 * others go to the next requests in arrival order, whatever their key, including requests without
 * one. A request takes from at most one queue.
 *
 * <pre>{@code
 * server.plan()
 *     .forNext(2, Fault.status(503))               // the next two requests get 503
 *     .next(Fault.commitThenDropResponse());       // the third loses its response
 * server.plan().forKey(key, Fault.dropRequest()); // the next request with this key is dropped
 * }</pre>
 *
 * <p>Thread-safe: scheduling from the test thread while the server takes faults on its own
 * threads is fine, and each fault goes to exactly one request. When several requests arrive at
 * once, which of them gets which queued fault follows the order in which the server reads them.
 *
 * <p>Beware of HTTP clients that retry on their own. OkHttp, for one, silently repeats a request
 * once when a connection breaks, unless {@code retryOnConnectionFailure(false)} is set; that repeat
 * is a new request here and takes the next fault.
 */
public final class FaultPlan {
  private final Deque<Fault> anyRequest = new ArrayDeque<>();
  private final Map<String, Deque<Fault>> byKey = new HashMap<>();

  FaultPlan() {}

  /**
   * Schedules a fault for the next request not claimed by a per-key fault.
   *
   * @param fault the fault
   * @return this plan, for chaining
   */
  public FaultPlan next(Fault fault) {
    return forNext(1, fault);
  }

  /**
   * Schedules a fault for each of the next {@code times} requests not claimed by a per-key fault,
   * after those already scheduled.
   *
   * @param times how many requests get it; at least 1
   * @param fault the fault
   * @return this plan, for chaining
   * @throws IllegalArgumentException if {@code times} is less than 1
   */
  public synchronized FaultPlan forNext(int times, Fault fault) {
    Objects.requireNonNull(fault, "fault");
    anyRequest.addAll(Collections.nCopies(checkTimes(times), fault));
    return this;
  }

  /**
   * Schedules a fault for the next request that carries {@code key}.
   *
   * @param key the idempotency key, bare ({@code k-1}) or quoted as a request header may carry it
   *     ({@code "k-1"}, as {@link ReceivedRequest#keyHeader()} shows a quoted key); both are the
   *     key {@code k-1}
   * @param fault the fault
   * @return this plan, for chaining
   * @throws IllegalArgumentException if no request could carry {@code key} as its key (empty, a
   *     space, a comma, more than {@value IdempotencyKey#MAX_LENGTH} characters...): the server
   *     answers 400 to such a request, so the fault could never be taken
   */
  public FaultPlan forKey(String key, Fault fault) {
    return forKey(key, 1, fault);
  }

  /**
   * Schedules a fault for each of the next {@code times} requests that carry {@code key}, after
   * those already scheduled for it.
   *
   * @param key the idempotency key, bare or quoted, as for {@link #forKey(String, Fault)}
   * @param times how many requests get it; at least 1
   * @param fault the fault
   * @return this plan, for chaining
   * @throws IllegalArgumentException if {@code times} is less than 1, or no request could carry
   *     {@code key} as its key
   */
  public synchronized FaultPlan forKey(String key, int times, Fault fault) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(fault, "fault");
    String k = requestKey(key);
    byKey.computeIfAbsent(k, x -> new ArrayDeque<>()).addAll(Collections.nCopies(checkTimes(times), fault));
    return this;
  }

  /**
   * The key a request whose key header held {@code key} is taken to carry. Read by the parser the
   * dispatcher reads requests with, so a fault is planned for exactly the key it will be looked up
   * by; a key the server would refuse is refused here, since no request could ever take its fault.
   */
  private static String requestKey(String key) {
    KeyHeader parsed = KeyHeader.parse(List.of(key));
    return parsed.key().map(IdempotencyKey::value).orElseThrow(() -> new IllegalArgumentException(
        "no request can carry this fault's key, so the fault would never be taken: the key has "
            + parsed.problem().orElse("no characters") + "; a key is 1 to " + IdempotencyKey.MAX_LENGTH
            + " visible ASCII characters other than '\"', ',' and '\\', bare or in double quotes"));
  }

  /**
   * How many scheduled faults no request has taken yet, in both queues.
   *
   * @return how many scheduled faults no request has taken yet, in both queues
   */
  public synchronized int pending() {
    return anyRequest.size() + byKey.values().stream().mapToInt(Deque::size).sum();
  }

  /** Drops every fault not taken yet. */
  public synchronized void clear() {
    anyRequest.clear();
    byKey.clear();
  }

  /** Takes the fault for one request: the key's queue first, then the shared one. */
  synchronized Optional<Fault> take(String key) {
    if (key != null) {
      Deque<Fault> queue = byKey.get(key);
      if (queue != null) {
        Fault f = queue.poll();
        if (queue.isEmpty()) {
          byKey.remove(key);
        }
        if (f != null) {
          return Optional.of(f);
        }
      }
    }
    return Optional.ofNullable(anyRequest.poll());
  }

  private static int checkTimes(int times) {
    if (times < 1) {
      throw new IllegalArgumentException("times must be at least 1: " + times);
    }
    return times;
  }

  @Override
  public synchronized String toString() {
    return "FaultPlan{next=" + anyRequest + ", byKey=" + byKey + "}";
  }
}
