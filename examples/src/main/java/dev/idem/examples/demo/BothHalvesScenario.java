package dev.idem.examples.demo;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.idem.core.OperationState;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotencyResult;
import dev.idem.okhttp.IdempotentOperation;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.jdkhttp.IdempotencyHttpFilter;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * Both halves are Idem: an app's order endpoint on the JDK HttpServer behind Idem's server guard
 * ({@link IdempotencyHttpFilter}), called by Idem's OkHttp client. The endpoint is slower than
 * the client's read timeout, so the client gives up while the order is being made: its retry meets
 * the guard's 409 (still in flight), waits, and then gets the stored order as a replay. One order.
 */
final class BothHalvesScenario implements Scenario {
  private static final Duration HANDLER_TIME = Duration.ofMillis(800);
  private static final Duration CLIENT_READ_TIMEOUT = Duration.ofMillis(300);

  @Override
  public String name() {
    return "both halves";
  }

  @Override
  public ScenarioResult run(DemoEnvironment env) throws Exception {
    AtomicInteger effects = new AtomicInteger();
    ConcurrentHashMap<String, AtomicInteger> requestsByKey = new ConcurrentHashMap<>();
    HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    ExecutorService threads = Executors.newFixedThreadPool(4);
    http.setExecutor(threads);
    try (IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).build();
        var journal = env.newJournal("both-halves")) {
      var context = http.createContext("/orders", exchange -> createOrder(exchange, effects));
      context.getFilters().add(new CountingFilter(guard.keyHeader(), requestsByKey));
      context.getFilters().add(new IdempotencyHttpFilter(guard));
      http.start();
      String url = "http://" + InetAddress.getLoopbackAddress().getHostAddress() + ":" + http.getAddress().getPort()
          + "/orders";

      // Without Idem on the client: each retry after a read timeout carries a new key, so the
      // guard rightly sees new operations, and the endpoint makes an order for each.
      NaiveClient.Run naive = NaiveClient.post(NaiveClient.http(CLIENT_READ_TIMEOUT), url,
          "{\"cart\":\"cart-2001\",\"amount\":990,\"currency\":\"EUR\"}", 3, false);
      int naiveEffects = effects.get();
      Thread.sleep(HANDLER_TIME.toMillis()); // let the naive orders finish before the run with Idem
      requestsByKey.clear();

      OkHttpClient client = new OkHttpClient.Builder()
          .addInterceptor(IdemOkHttp.builder(DemoEnvironment.executor(journal)).build().interceptor())
          .addInterceptor(chain -> chain.proceed(
              chain.request().newBuilder().header("Authorization", DemoEnvironment.SECRET).build()))
          .retryOnConnectionFailure(false)
          .readTimeout(CLIENT_READ_TIMEOUT)
          .build();
      IdempotentOperation op = IdempotentOperation.of("create-order").withReference("cart-2002");
      String key = op.key().value();
      Request request = new Request.Builder().url(url)
          .post(RequestBody.create("{\"cart\":\"cart-2002\",\"amount\":990,\"currency\":\"EUR\"}",
              MediaType.get("application/json")))
          .tag(IdempotentOperation.class, op).build();

      int status;
      String body;
      boolean replayed;
      try (Response response = client.newCall(request).execute()) {
        status = response.code();
        body = response.body().string();
        replayed = IdempotencyResult.of(response).map(IdempotencyResult::replayed).orElse(false);
      }
      OperationState state = journal.find(op.id()).orElseThrow().state();
      long attempts = requestsByKey.getOrDefault(key, new AtomicInteger()).get();
      Checks c = new Checks()
          .expect("without Idem: orders made for one purchase", 3, naiveEffects)
          .expect("server-side effects (orders made)", 1, effects.get() - naiveEffects)
          .require("the client retried after its read timeout (at least 2 requests)", attempts >= 2)
          .expect("every request the guard saw carried the same key", 1, requestsByKey.size())
          .expect("status the app saw", 201, status)
          .require("the app got the guard's replay of the one order",
              replayed && body.contains("\"order-" + (naiveEffects + 1) + "\""))
          .expect("journal state", OperationState.SUCCEEDED, state);
      return new ScenarioResult(name(), key, attempts, effects.get() - naiveEffects,
          state + (replayed ? ", replayed" : ""), c)
          .withoutIdem(new ScenarioResult.Baseline(naive.attempts(), naiveEffects,
              naive.attempts() + " read timeouts, a new key each: " + naiveEffects + " orders"));
    } finally {
      http.stop(0);
      threads.shutdownNow();
    }
  }

  /** The app's endpoint: makes an order (the effect), slowly, as a busy payment provider would. */
  private static void createOrder(HttpExchange exchange, AtomicInteger effects) throws IOException {
    exchange.getRequestBody().readAllBytes();
    int n = effects.incrementAndGet();
    try {
      Thread.sleep(HANDLER_TIME.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
    byte[] json = ("{\"order\":\"order-" + n + "\"}").getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.getResponseHeaders().set("Location", "/orders/order-" + n);
    exchange.sendResponseHeaders(201, json.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(json);
    }
  }

  /** Counts requests per key as they arrive, before the guard, for the demo's attempts column. */
  private static final class CountingFilter extends Filter {
    private final String keyHeader;
    private final ConcurrentHashMap<String, AtomicInteger> counts;

    CountingFilter(String keyHeader, ConcurrentHashMap<String, AtomicInteger> counts) {
      this.keyHeader = keyHeader;
      this.counts = counts;
    }

    @Override
    public void doFilter(HttpExchange exchange, Chain chain) throws IOException {
      String key = exchange.getRequestHeaders().getFirst(keyHeader);
      counts.computeIfAbsent(key == null ? "(none)" : key, k -> new AtomicInteger()).incrementAndGet();
      chain.doFilter(exchange);
    }

    @Override
    public String description() {
      return "counts requests per key";
    }
  }
}
