package dev.idem.examples.demo;

import dev.idem.core.IdempotencyKeyReusedException;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.IdempotentExecutor;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import okhttp3.OkHttpClient;
import okhttp3.Response;

/**
 * A key reused for another payload is refused twice over: locally before anything is sent, and,
 * when a second client with its own journal bypasses that check, by the server with 422.
 */
final class KeyReuseScenario implements Scenario {
  @Override
  public String name() {
    return "key reuse";
  }

  @Override
  public ScenarioResult run(DemoEnvironment env) throws Exception {
    // Without Idem: nothing checks locally, so the edited payload goes out under the old key and
    // only a server that checks fingerprints (this one does) stops it.
    okhttp3.OkHttpClient naiveHttp = NaiveClient.http(java.time.Duration.ofSeconds(5));
    String naiveKey = java.util.UUID.randomUUID().toString();
    NaiveClient.postOnce(naiveHttp, env.naiveUrl("/orders"), "{\"amount\":100}", naiveKey);
    NaiveClient.Run reuse = NaiveClient.postOnce(naiveHttp, env.naiveUrl("/orders"), "{\"amount\":999}", naiveKey);
    long naiveRequests = env.requestsWithKey(naiveKey);

    try (JdbcJournal journal = env.newJournal("key-reuse")) {
      OkHttpClient client = DemoEnvironment.client(IdemOkHttp.builder(DemoEnvironment.executor(journal)).build());
      IdempotentOperation op = IdempotentOperation.of("create-order");
      String key = op.key().value();
      try (Response first = client.newCall(DemoEnvironment.post(env.server, "/orders", "{\"amount\":100}")
          .tag(IdempotentOperation.class, op).build()).execute()) {
        first.body().string();
      }
      long requestsBefore = env.requestsWithKey(key);

      boolean refusedLocally = false;
      try (Response ignored = client.newCall(DemoEnvironment.post(env.server, "/orders", "{\"amount\":999}")
          .tag(IdempotentOperation.class, op).build()).execute()) {
        // reaching here means the reuse went unnoticed
      } catch (IdempotencyKeyReusedException e) {
        refusedLocally = !e.detectedByServer();
      }
      long requestsAfterLocal = env.requestsWithKey(key);

      // Another process with its own journal cannot see the first record: the server must refuse.
      OkHttpClient other = DemoEnvironment.client(IdemOkHttp.builder(
          IdempotentExecutor.builder().journal(new InMemoryJournal()).retryPolicy(DemoEnvironment.POLICY).build())
          .build());
      boolean refusedByServer = false;
      try (Response ignored = other.newCall(DemoEnvironment.post(env.server, "/orders", "{\"amount\":999}")
          .tag(IdempotentOperation.class, op).build()).execute()) {
        // reaching here means the server accepted a reused key
      } catch (IdempotencyKeyReusedException e) {
        refusedByServer = e.detectedByServer();
      }

      Checks c = new Checks()
          .expect("without Idem: the reused key went out, and only the server refused it", 422, reuse.lastStatus())
          .require("the reuse was refused locally", refusedLocally)
          .expect("requests sent by the refused local call", 0L, requestsAfterLocal - requestsBefore)
          .require("the server refused the bypassing client with 422", refusedByServer)
          .expect("server-side effects for the key", 1L, env.server.effectCount(key));
      return new ScenarioResult(name(), key, env.requestsWithKey(key), env.server.effectCount(key),
          "refused " + (refusedLocally ? "locally" : "?") + " + " + (refusedByServer ? "422" : "?"), c)
          .withoutIdem(new ScenarioResult.Baseline(naiveRequests, env.server.effectCount(naiveKey),
              "reuse sent; only the server refused it (" + reuse.ending() + ")"));
    }
  }
}
