package dev.idem.server.support;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The business behind both adapters' tests, framework-free: it counts effects per key and answers
 * as the {@code X-Mode} request header says. A test can hold the next handler run on a latch.
 */
public final class OrderApp {
  private final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
  private final AtomicLong total = new AtomicLong();
  private volatile CountDownLatch hold;
  private final CountDownLatch entered = new CountDownLatch(1);

  /** What the handler answers. */
  public record Answer(int status, String contentType, String location, byte[] body) {}

  /** Makes handler runs wait until {@link #release()}. */
  public void holdHandlers() {
    hold = new CountDownLatch(1);
  }

  public void release() {
    hold.countDown();
  }

  public boolean awaitEntered() throws InterruptedException {
    return entered.await(10, TimeUnit.SECONDS);
  }

  /** One run of the business action: an effect, then the answer the mode asks for. */
  public Answer handle(String key, String mode, byte[] body) throws InterruptedException {
    long n = total.incrementAndGet();
    if (key != null) {
      effects.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    }
    entered.countDown();
    CountDownLatch h = hold;
    if (h != null && !h.await(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException("never released");
    }
    String m = mode == null ? "" : mode;
    switch (m) {
      case "throw":
        throw new IllegalStateException("the handler failed");
      case "500":
        // The effect above has committed; then the answer fails.
        return new Answer(500, "application/json", null, "{\"error\":\"rendering failed\"}".getBytes(StandardCharsets.UTF_8));
      case "503":
        return new Answer(503, "application/json", null, "{\"busy\":true}".getBytes(StandardCharsets.UTF_8));
      case "big":
        return new Answer(201, "text/plain", "/orders/" + n, "x".repeat(100_000).getBytes(StandardCharsets.UTF_8));
      default:
        String json = "{\"order\":" + n + ",\"body\":" + new String(body, StandardCharsets.UTF_8) + "}";
        return new Answer(201, "application/json", "/orders/" + n, json.getBytes(StandardCharsets.UTF_8));
    }
  }

  public int effects(String key) {
    AtomicInteger n = effects.get(key);
    return n == null ? 0 : n.get();
  }

  public long totalEffects() {
    return total.get();
  }
}
