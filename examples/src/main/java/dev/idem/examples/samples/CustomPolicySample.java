package dev.idem.examples.samples;

import dev.idem.core.Classifier;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Jitter;
import dev.idem.core.RetryPolicy;
import dev.idem.core.Verdict;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import java.time.Duration;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * A custom retry policy and classifier: this API answers 404 while a just-created account
 * propagates, so 404 is transient for it; the schedule is decorrelated jitter with a short cap, and
 * one operation gets a stricter policy of its own.
 */
public final class CustomPolicySample {
  private CustomPolicySample() {}

  /** Provisions an account through two transient 404s; returns the final status. */
  public static int run(IdempotentServer server) throws Exception {
    RetryPolicy policy = RetryPolicy.builder()
        .maxAttempts(6)
        .baseDelay(Duration.ofMillis(20))
        .maxDelay(Duration.ofMillis(200))
        .jitter(Jitter.DECORRELATED)
        .deadline(Duration.ofSeconds(10))
        .build();
    Classifier classifier = Classifier.forStatus(404, Verdict.transientFailure("HTTP 404: still propagating"))
        .orElse(Classifier.shouldRetryHeader("Should-Retry"))
        .orElse(Classifier.defaults());
    // The executor is the app's here (given to the builder), so the app closes it.
    try (IdempotentExecutor executor = IdempotentExecutor.builder()
        .journal(new InMemoryJournal())
        .retryPolicy(policy)
        .classifier(classifier)
        .build()) {
      // install, as in the README: Idem's interceptor, and OkHttp's own silent re-sends off.
      OkHttpClient client = IdemOkHttp.builder(executor).build().install(new OkHttpClient.Builder()).build();

      server.plan().forNext(2, Fault.status(404));
      IdempotentOperation op = IdempotentOperation.of("provision-account")
          .withPolicy(policy.toBuilder().maxAttempts(4).build()); // this operation only
      try (Response r = client.newCall(new Request.Builder().url(server.url("/accounts").toString())
          .post(RequestBody.create("{\"plan\":\"pro\"}", MediaType.get("application/json")))
          .tag(IdempotentOperation.class, op).build()).execute()) {
        return r.code();
      }
    }
  }

  public static void main(String[] args) throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      System.out.println("HTTP " + run(server));
    }
  }
}
