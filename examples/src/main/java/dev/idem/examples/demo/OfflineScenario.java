package dev.idem.examples.demo;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.RetryPolicy;
import dev.idem.core.outbox.OutboxDispatcher;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;

/**
 * The network is down: orders are submitted to the outbox, journaled, and wait (the breaker opens,
 * the dispatcher slows its polling) without failing. When the network comes back, each is delivered
 * exactly once with its own key.
 */
final class OfflineScenario implements Scenario {
  private static final int ORDERS = 12;

  @Override
  public String name() {
    return "offline queue";
  }

  @Override
  public ScenarioResult run(DemoEnvironment env) throws Exception {
    AtomicBoolean offline = new AtomicBoolean(true);
    // Without Idem: each order is tried a few times during the outage, fails, and is gone.
    OkHttpClient naiveHttp = NaiveClient.http(Duration.ofSeconds(5)).newBuilder()
        .addInterceptor(chain -> {
          throw new ConnectException("network unreachable (simulated outage)");
        })
        .build();
    long naiveAttempts = 0;
    long naiveEffects = 0;
    for (int i = 0; i < ORDERS; i++) {
      NaiveClient.Run run = NaiveClient.post(naiveHttp, env.naiveUrl("/orders"), "{\"cart\":\"naive-" + i + "\"}", 3,
          true);
      naiveAttempts += run.attempts();
      naiveEffects += env.effectsFor(run.keys());
    }
    long effectsBefore = env.server.totalEffects();
    try (JdbcJournal journal = env.newJournal("offline")) {
      // Queued delivery may wait out a long outage, so it gets many attempts and a long deadline.
      RetryPolicy patient = DemoEnvironment.POLICY.toBuilder().maxAttempts(100).deadline(Duration.ofMinutes(5)).build();
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).retryPolicy(patient)
          .circuitBreaker(CircuitBreakerSettings.builder().minimumCalls(4).slidingWindowSize(8)
              .openFor(Duration.ofMillis(300)).halfOpenProbes(1).build())
          .build();
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      // The network, as the app sees it: while "offline", no connection can be made.
      OkHttpClient client = DemoEnvironment.client(idem).newBuilder()
          .addInterceptor(chain -> {
            if (offline.get()) {
              throw new ConnectException("network unreachable (simulated outage)");
            }
            return chain.proceed(chain.request());
          })
          .build();

      List<OperationId> ops = new ArrayList<>();
      List<CompletableFuture<Outcome>> handles = new ArrayList<>();
      try (OutboxDispatcher outbox = OutboxDispatcher.builder(executor)
          .register("create-order", idem.transport(client))
          .pollInterval(Duration.ofMillis(50))
          .maxPollInterval(Duration.ofMillis(400))
          .build()
          .start()) {
        for (int i = 0; i < ORDERS; i++) {
          // The app's own OkHttp request, journaled for the outbox: no RequestSnapshot, no Operation.
          Request order = new Request.Builder().url(env.server.url("/orders").toString())
              .post(RequestBody.create("{\"cart\":\"offline-" + i + "\"}", MediaType.get("application/json")))
              .tag(IdempotentOperation.class, IdempotentOperation.of("create-order").withReference("offline-" + i))
              .build();
          OperationId op = idem.enqueue(order);
          ops.add(op);
          handles.add(outbox.await(op));
        }
        Thread.sleep(1500); // a real outage, long enough for the breaker and the poll backoff to engage
        // Unsettled, not just PENDING: the dispatcher may be trying one against the dead host at the
        // moment of the sample (IN_FLIGHT), which is the outbox doing its job, not a lost order.
        long pendingWhileOffline = ops.stream().filter(op -> !state(executor, op).isTerminal()).count();
        long effectsWhileOffline = env.server.totalEffects() - effectsBefore;
        boolean backedOff = outbox.isOffline() || outbox.currentPollInterval().compareTo(Duration.ofMillis(50)) > 0;

        offline.set(false);
        CompletableFuture.allOf(handles.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

        Checks c = new Checks()
            .expect("without Idem: orders delivered after the outage (the rest are lost)", 0L, naiveEffects)
            .expect("operations still unsettled, PENDING or IN_FLIGHT (none FAILED), while offline", (long) ORDERS,
                pendingWhileOffline)
            .expect("server-side effects while offline", 0L, effectsWhileOffline)
            .require("the dispatcher backed off while offline", backedOff);
        List<String> wrong = new ArrayList<>();
        for (OperationId op : ops) {
          String key = op.key().value();
          long n = env.server.effectCount(key);
          OperationState s = state(executor, op);
          if (n != 1 || s != OperationState.SUCCEEDED) {
            wrong.add(key + ": " + n + " effects, " + s);
          }
        }
        c.expect("orders with exactly one effect and SUCCEEDED in the journal", ORDERS + " of " + ORDERS,
            (ORDERS - wrong.size()) + " of " + ORDERS + (wrong.isEmpty() ? "" : " " + wrong));
        long attempts = ops.stream().mapToLong(op -> env.requestsWithKey(op.key().value())).sum();
        long effects = ops.stream().mapToLong(op -> env.server.effectCount(op.key().value())).sum();
        return new ScenarioResult(name(), ORDERS + " keys", attempts, effects,
            ORDERS + " queued, then " + ORDERS + " delivered", c)
            .withoutIdem(new ScenarioResult.Baseline(naiveAttempts, naiveEffects,
                "failed while offline: " + (ORDERS - naiveEffects) + " of " + ORDERS + " orders lost"));
      }
    }
  }

  private static OperationState state(IdempotentExecutor executor, OperationId op) {
    try {
      return executor.find(op).map(r -> r.state()).orElse(null);
    } catch (java.io.IOException e) {
      return null;
    }
  }
}
