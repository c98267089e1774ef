package dev.idem.examples.badinput;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.RetryPolicy;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * The app of {@link SecretsTest}, in a JVM of its own so that SLF4J's simple logger is at TRACE from
 * its first line. It sends requests that carry every planted credential through Idem with an
 * embedded journal: one live through OkHttp (a 503 first, so it retries), one enqueued, then resumed
 * after the journal is closed and reopened (a restart) through a client whose interceptor re-adds
 * Authorization, and two with credentials in the query string, which must be refused.
 *
 * <p>Arguments: the journal directory and the server's base URL. Prints one {@code RESULT} line per step.
 */
public final class SecretsChild {
  private SecretsChild() {
  }

  public static void main(String[] args) throws Exception {
    // Before any logger exists: slf4j-simple reads its level once, at its first use.
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "trace");
    Path dir = Path.of(args[0]);
    String base = args[1];
    RetryPolicy fast = RetryPolicy.builder().baseDelay(Duration.ofMillis(5)).maxDelay(Duration.ofMillis(20)).build();
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      IdempotentExecutor executor = executor(journal, fast);
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      OkHttpClient client = new OkHttpClient.Builder().addInterceptor(idem.interceptor())
          .retryOnConnectionFailure(false).build();

      Request.Builder live = new Request.Builder().url(base + "/orders")
          .post(RequestBody.create("{\"amount\":1}", MediaType.get("application/json")))
          .tag(IdempotentOperation.class, IdempotentOperation.of("live-order").withReference("ref-live"));
      SecretsTest.PLANTED_HEADERS.forEach(live::header);
      try (Response r = client.newCall(live.build()).execute()) {
        System.out.println("RESULT live " + r.code());
      }

      RequestSnapshot.Builder queued = RequestSnapshot.builder("POST", URI.create(base + "/orders"))
          .body("{\"amount\":2}".getBytes(StandardCharsets.UTF_8), "application/json");
      SecretsTest.PLANTED_HEADERS.forEach(queued::header);
      OperationRecord q = executor.enqueue(Operation.builder("queued-order", queued.build())
          .reference("ref-queued").build());
      System.out.println("RESULT queued " + q.state());

      refused("query-api-key", () -> client.newCall(new Request.Builder()
          .url(base + "/orders?currency=EUR&api_key=" + SecretsTest.PLANTED_QUERY_API_KEY)
          .post(RequestBody.create("{}", MediaType.get("application/json")))
          .tag(IdempotentOperation.class, IdempotentOperation.of("query-order")).build()).execute().close());
      refused("query-access-token", () -> executor.enqueue(Operation.builder("query-order",
          RequestSnapshot.builder("POST", URI.create(base + "/orders?access_token=" + SecretsTest.PLANTED_QUERY_TOKEN))
              .build()).build()));
    }
    // A restart: the queued operation is resumed from the journal alone, through the app's client,
    // whose own interceptor re-applies the credential the journal never held.
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      IdempotentExecutor executor = executor(journal, fast);
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      OkHttpClient appClient = new OkHttpClient.Builder().addInterceptor(idem.interceptor())
          .addInterceptor(chain -> chain.proceed(chain.request().newBuilder()
              .header("Authorization", SecretsTest.PLANTED_HEADERS.get("Authorization")).build()))
          .retryOnConnectionFailure(false).build();
      var summary = executor.resumePending(Map.of("queued-order", ResumeHandler.of(idem.transport(appClient),
          outcome -> System.out.println("RESULT resumed " + outcome.response().status()),
          failure -> System.out.println("RESULT resumed-failed " + failure.state()))));
      System.out.println("RESULT summary " + summary);
    }
  }

  private static IdempotentExecutor executor(JdbcJournal journal, RetryPolicy policy) {
    return IdempotentExecutor.builder().journal(journal).retryPolicy(policy)
        .secretHeaders(Set.of(SecretsTest.APP_NAMED_HEADER)).build();
  }

  private interface Step {
    void run() throws Exception;
  }

  private static void refused(String what, Step step) {
    try {
      step.run();
      System.out.println("RESULT " + what + " accepted");
    } catch (IllegalArgumentException e) {
      System.out.println("RESULT " + what + " refused");
    } catch (Exception e) {
      System.out.println("RESULT " + what + " other " + e.getClass().getName());
    }
  }
}
