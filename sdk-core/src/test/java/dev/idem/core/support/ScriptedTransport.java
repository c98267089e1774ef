package dev.idem.core.support;

import dev.idem.core.testing.VirtualTime;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A transport that plays a per-attempt script: respond with a status, headers and body, or throw a
 * given {@link IOException}. Each attempt may take some virtual time. It records the key and the
 * snapshot of every attempt, and runs an optional check at send time (for example, that the
 * journal holds the operation IN_FLIGHT). Serves both the sync and the async contract; async
 * attempts complete before {@code sendAsync} returns unless the action is {@link #hold}.
 */
public final class ScriptedTransport implements Transport, AsyncTransport {

  /** What one attempt does. */
  public sealed interface Action permits Respond, Fail, Hold {}

  public record Respond(ResponseSnapshot response, Duration latency) implements Action {}

  public record Fail(IOException failure, Duration latency) implements Action {}

  /** Async only: the future is handed to the test, which completes it when it likes. */
  public record Hold(CompletableFuture<ResponseSnapshot> future) implements Action {}

  /** One recorded attempt. */
  public record Sent(int number, IdempotencyKey key, RequestSnapshot request, Instant at, String thread) {}

  private final VirtualTime time;
  private final Deque<Action> script = new ArrayDeque<>();
  private Action fallback;
  private final List<Sent> sent = new ArrayList<>();
  private final List<Consumer<Sent>> checks = new ArrayList<>();

  public ScriptedTransport(VirtualTime time) {
    this.time = Objects.requireNonNull(time, "time");
  }

  public static ResponseSnapshot response(int status) {
    return response(status, Map.of(), "");
  }

  public static ResponseSnapshot response(int status, Map<String, String> headers, String body) {
    Map<String, List<String>> h = new LinkedHashMap<>();
    headers.forEach((k, v) -> h.put(k, List.of(v)));
    return new ResponseSnapshot(status, h, body.getBytes(StandardCharsets.UTF_8));
  }

  public static Action status(int status) {
    return new Respond(response(status), Duration.ZERO);
  }

  public static Action status(int status, Map<String, String> headers) {
    return new Respond(response(status, headers, ""), Duration.ZERO);
  }

  public static Action status(int status, Map<String, String> headers, String body) {
    return new Respond(response(status, headers, body), Duration.ZERO);
  }

  public static Action fail(IOException e) {
    return new Fail(e, Duration.ZERO);
  }

  public static Action hold(CompletableFuture<ResponseSnapshot> future) {
    return new Hold(future);
  }

  public static Action slow(Action a, Duration latency) {
    if (a instanceof Respond r) {
      return new Respond(r.response(), latency);
    }
    if (a instanceof Fail f) {
      return new Fail(f.failure(), latency);
    }
    throw new IllegalArgumentException("a held attempt has no latency");
  }

  /** Appends attempts to the script. */
  public synchronized ScriptedTransport then(Action... actions) {
    script.addAll(List.of(actions));
    return this;
  }

  /** What every attempt does once the script is used up; without one, running out fails the test. */
  public synchronized ScriptedTransport otherwise(Action action) {
    this.fallback = action;
    return this;
  }

  /** A check run at send time, before the attempt plays; throw AssertionError to fail the test. */
  public synchronized ScriptedTransport checkOnSend(Consumer<Sent> check) {
    checks.add(check);
    return this;
  }

  public synchronized List<Sent> sent() {
    return List.copyOf(sent);
  }

  public synchronized int count() {
    return sent.size();
  }

  private Action next(RequestSnapshot request, IdempotencyKey key) {
    Sent s;
    Action a;
    List<Consumer<Sent>> toRun;
    synchronized (this) {
      s = new Sent(sent.size() + 1, key, request, time.now(), Thread.currentThread().getName());
      sent.add(s);
      a = script.isEmpty() ? fallback : script.poll();
      toRun = List.copyOf(checks);
    }
    toRun.forEach(c -> c.accept(s));
    if (a == null) {
      throw new AssertionError("script exhausted at attempt " + s.number());
    }
    return a;
  }

  @Override
  public ResponseSnapshot send(RequestSnapshot request, IdempotencyKey key) throws IOException {
    Action a = next(request, key);
    if (a instanceof Respond r) {
      time.jump(r.latency());
      return r.response();
    }
    if (a instanceof Fail f) {
      time.jump(f.latency());
      throw f.failure();
    }
    try {
      return ((Hold) a).future().join();
    } catch (java.util.concurrent.CompletionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw e;
    }
  }

  @Override
  public CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key) {
    Action a = next(request, key);
    if (a instanceof Respond r) {
      time.jump(r.latency());
      return CompletableFuture.completedFuture(r.response());
    }
    if (a instanceof Fail f) {
      time.jump(f.latency());
      return CompletableFuture.failedFuture(f.failure());
    }
    return ((Hold) a).future();
  }

  /** For callers that want an unchecked failure in a lambda. */
  public static RuntimeException unchecked(IOException e) {
    return new UncheckedIOException(e);
  }
}
