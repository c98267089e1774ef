package dev.idem.examples.demo;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotencyResult;
import dev.idem.okhttp.IdempotentOperation;
import dev.idem.testkit.Fault;
import okhttp3.OkHttpClient;
import okhttp3.Response;

/**
 * The server commits the order, then the response is lost. Idem retries with the same key, the
 * server replays its first answer, and there is exactly one order.
 */
final class LostResponseScenario implements Scenario {
  @Override
  public String name() {
    return "lost response";
  }

  @Override
  public ScenarioResult run(DemoEnvironment env) throws Exception {
    // Without Idem: the response is lost, the loop retries with a new key, the server makes a second order.
    env.server.plan().next(Fault.commitThenDropResponse());
    NaiveClient.Run naive = NaiveClient.post(NaiveClient.http(java.time.Duration.ofSeconds(5)),
        env.naiveUrl("/orders"), "{\"cart\":\"cart-1000\",\"amount\":4200,\"currency\":\"EUR\"}", 3, false);
    long naiveEffects = env.effectsFor(naive.keys());

    try (JdbcJournal journal = env.newJournal("lost-response")) {
      IdempotentExecutor executor = DemoEnvironment.executor(journal);
      OkHttpClient client = DemoEnvironment.client(IdemOkHttp.builder(executor).build());
      IdempotentOperation op = IdempotentOperation.of("create-order").withReference("cart-1001");
      String key = op.key().value();

      env.server.plan().next(Fault.commitThenDropResponse());
      String body;
      boolean replayed;
      int status;
      try (Response response = client.newCall(DemoEnvironment.post(env.server, "/orders",
          "{\"cart\":\"cart-1001\",\"amount\":4200,\"currency\":\"EUR\"}")
          .tag(IdempotentOperation.class, op).build()).execute()) {
        status = response.code();
        body = response.body().string();
        replayed = IdempotencyResult.of(response).map(IdempotencyResult::replayed).orElse(false);
      }

      OperationState state = journal.find(op.id()).orElseThrow().state();
      Checks c = new Checks()
          .expect("without Idem: orders made for one purchase (the duplicate Idem prevents)", 2L, naiveEffects)
          .expect("server-side effects for the key", 1L, env.server.effectCount(key))
          .expect("requests carrying the key", 2L, env.requestsWithKey(key))
          .require("every request to /orders carried the same key", env.onlyKeySeenOn("/orders", key))
          .expect("status the app saw", 201, status)
          .require("the app saw the server's replay of the original order", replayed && body.contains(key))
          .expect("journal state", OperationState.SUCCEEDED, state)
          .require("no secret in the journal", !journal.find(op.id()).orElseThrow().request().headers()
              .containsKey("authorization"));
      return new ScenarioResult(name(), key, env.requestsWithKey(key), env.server.effectCount(key),
          state + (replayed ? ", replayed" : ""), c)
          .withoutIdem(new ScenarioResult.Baseline(naive.attempts(), naiveEffects,
              naive.ending() + " after a retry with a new key: " + naiveEffects + " orders"));
    }
  }
}
