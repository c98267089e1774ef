package dev.idem.core.support;

import dev.idem.core.testing.VirtualTime;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * An in-process target host on virtual time, for resilience tests and the outage benchmark: a
 * {@link Behaviour} decides each attempt's reply, async replies arrive after a latency on the
 * {@link VirtualTime} scheduler (or are held, never answering), and every attempt is counted per key.
 * A 2xx for a key already answered with 2xx carries {@code Idempotent-Replayed: true}, and
 * {@link #effects()} counts distinct keys that took effect, as an idempotent server would.
 * Thread-safe (one lock); nothing sleeps.
 */
public final class FakeHost implements Transport, AsyncTransport {
  /** What one attempt gets. */
  @FunctionalInterface
  public interface Behaviour {
    /**
     * @param key the attempt's key
     * @param attemptOfKey 1 for the first attempt with this key
     * @param now the virtual time
     */
    Reply reply(IdempotencyKey key, int attemptOfKey, Instant now);
  }

  /** A response, a failure, or no answer at all ({@code hangs}, async only). */
  public record Reply(ResponseSnapshot response, IOException failure, boolean hangs) {
    public static Reply status(int status) {
      return new Reply(FakeHost.response(status, Map.of()), null, false);
    }

    public static Reply status(int status, Map<String, String> headers) {
      return new Reply(FakeHost.response(status, headers), null, false);
    }

    public static Reply fail(IOException e) {
      return new Reply(null, e, false);
    }

    public static Reply hang() {
      return new Reply(null, null, true);
    }
  }

  private final VirtualTime time;
  private Behaviour behaviour;
  private Duration latency = Duration.ZERO;
  private final Map<IdempotencyKey, Integer> attempts = new HashMap<>();
  private final Map<IdempotencyKey, Boolean> effected = new HashMap<>();
  private final List<Instant> sendTimes = new ArrayList<>();
  private final List<CompletableFuture<ResponseSnapshot>> held = new ArrayList<>();
  private int inFlight;
  private int maxInFlight;

  public FakeHost(VirtualTime time, Behaviour behaviour) {
    this.time = Objects.requireNonNull(time, "time");
    this.behaviour = Objects.requireNonNull(behaviour, "behaviour");
  }

  /** Always answers {@code status}. */
  public static Behaviour always(int status) {
    return (k, n, t) -> Reply.status(status);
  }

  public static ResponseSnapshot response(int status, Map<String, String> headers) {
    Map<String, List<String>> h = new HashMap<>();
    headers.forEach((k, v) -> h.put(k, List.of(v)));
    return new ResponseSnapshot(status, h, ("{\"status\":" + status + "}").getBytes(StandardCharsets.UTF_8));
  }

  public synchronized void behave(Behaviour b) {
    this.behaviour = Objects.requireNonNull(b, "behaviour");
  }

  /** How long async replies take, in virtual time. */
  public synchronized FakeHost latency(Duration d) {
    this.latency = d;
    return this;
  }

  @Override
  public ResponseSnapshot send(RequestSnapshot request, IdempotencyKey key) throws IOException {
    Reply r = decide(key);
    synchronized (this) {
      inFlight--;
    }
    if (r.hangs()) {
      throw new IllegalStateException("a synchronous FakeHost cannot hang");
    }
    if (r.failure() != null) {
      throw r.failure();
    }
    return r.response();
  }

  @Override
  public CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key) {
    Reply r = decide(key);
    CompletableFuture<ResponseSnapshot> f = new CompletableFuture<>();
    f.whenComplete((x, e) -> {
      synchronized (this) {
        inFlight--;
      }
    });
    if (r.hangs()) {
      synchronized (this) {
        held.add(f);
      }
      return f;
    }
    Runnable answer = () -> {
      if (r.failure() != null) {
        f.completeExceptionally(r.failure());
      } else {
        f.complete(r.response());
      }
    };
    Duration d;
    synchronized (this) {
      d = latency;
    }
    if (d.isZero()) {
      answer.run();
    } else {
      time.scheduler().schedule(answer, d);
    }
    return f;
  }

  private Reply decide(IdempotencyKey key) {
    Behaviour b;
    int n;
    Instant now = time.now();
    synchronized (this) {
      n = attempts.merge(key, 1, Integer::sum);
      sendTimes.add(now);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      b = behaviour;
    }
    Reply r = b.reply(key, n, now);
    if (r.response() != null && r.response().isSuccessful()) {
      synchronized (this) {
        if (effected.putIfAbsent(key, true) != null) {
          Map<String, String> replay = Map.of("Idempotent-Replayed", "true");
          return Reply.status(r.response().status(), replay);
        }
      }
    }
    return r;
  }

  /** Attempts with {@code key}. */
  public synchronized int attempts(IdempotencyKey key) {
    return attempts.getOrDefault(key, 0);
  }

  /** Attempts in total. */
  public synchronized int totalAttempts() {
    return sendTimes.size();
  }

  /** When each attempt arrived, in order. */
  public synchronized List<Instant> sendTimes() {
    return List.copyOf(sendTimes);
  }

  /** Distinct keys that took effect (got a 2xx). */
  public synchronized int effects() {
    return effected.size();
  }

  /** The most attempts that were unanswered at once. */
  public synchronized int maxConcurrent() {
    return maxInFlight;
  }

  /** Attempts that hang, oldest first; complete one to answer it late. */
  public synchronized List<CompletableFuture<ResponseSnapshot>> held() {
    return List.copyOf(held);
  }
}
