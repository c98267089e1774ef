package dev.idem.examples.demo;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import dev.idem.testkit.Fault;
import java.util.List;
import okhttp3.OkHttpClient;
import okhttp3.Response;

/**
 * The server refuses the payment permanently (402). Idem does not retry; the operation ends FAILED
 * and sits in the dead-letter list, from which an operator can re-drive it with the same key.
 */
final class PermanentErrorScenario implements Scenario {
  @Override
  public String name() {
    return "permanent error";
  }

  @Override
  public ScenarioResult run(DemoEnvironment env) throws Exception {
    // Without Idem: the loop retries every error, the permanent refusal included.
    env.server.plan().forNext(3, Fault.status(402));
    NaiveClient.Run naive = NaiveClient.post(NaiveClient.http(java.time.Duration.ofSeconds(5)),
        env.naiveUrl("/charges"), "{\"amount\":50}", 3, true);

    try (JdbcJournal journal = env.newJournal("permanent")) {
      IdempotentExecutor executor = DemoEnvironment.executor(journal);
      OkHttpClient client = DemoEnvironment.client(IdemOkHttp.builder(executor).build());
      IdempotentOperation op = IdempotentOperation.of("charge-card");
      String key = op.key().value();
      env.server.plan().next(Fault.status(402));
      int status;
      try (Response response = client.newCall(DemoEnvironment.post(env.server, "/charges", "{\"amount\":50}")
          .tag(IdempotentOperation.class, op).build()).execute()) {
        status = response.code();
      }
      List<OperationRecord> deadLetters = executor.list(OperationState.FAILED, null, 100);
      Checks c = new Checks()
          .expect("without Idem: times the permanent 402 was retried into the provider", 3L, naive.attempts())
          .expect("status the app saw", 402, status)
          .expect("requests carrying the key (no retry)", 1L, env.requestsWithKey(key))
          .expect("server-side effects for the key", 0L, env.server.effectCount(key))
          .require("the operation is in the dead-letter list",
              deadLetters.stream().anyMatch(r -> r.id().equals(op.id())));
      return new ScenarioResult(name(), key, env.requestsWithKey(key), env.server.effectCount(key),
          "FAILED (dead letter)", c)
          .withoutIdem(new ScenarioResult.Baseline(naive.attempts(), env.effectsFor(naive.keys()),
              naive.ending() + " " + naive.attempts() + " times; the app retried a refusal"));
    }
  }
}
