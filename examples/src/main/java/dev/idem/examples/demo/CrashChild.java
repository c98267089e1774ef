package dev.idem.examples.demo;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotentOperation;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import okhttp3.OkHttpClient;
import okhttp3.Response;

/**
 * The app process of the crash scenario, run in a child JVM so that it can really be killed.
 *
 * <ul>
 *   <li>{@code send DIR URL KEY}: creates an order with the given key; the demo kills this process
 *       while the server holds the response.</li>
 *   <li>{@code resume DIR URL}: the restarted app resumes pending operations with the journaled
 *       key and prints {@code RESUMED <key> <status> replayed=<bool>}.</li>
 * </ul>
 */
public final class CrashChild {
  /** The lease is short so that the restarted process may take the operation over quickly. */
  static final Duration LEASE = Duration.ofSeconds(1);

  private CrashChild() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    URI base = URI.create(args[2]);
    int exit = 0;
    // Close the journal before exiting: its later writes (attempts, completion) are group-committed
    // in the background, and System.exit inside the try block would skip the final flush.
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal)
          .retryPolicy(DemoEnvironment.POLICY).leaseFor(LEASE).build();
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      OkHttpClient client = DemoEnvironment.client(idem).newBuilder().readTimeout(Duration.ofMinutes(2)).build();
      if (args[0].equals("send")) {
        send(client, base, IdempotencyKey.of(args[3]));
      } else {
        exit = resume(executor, idem, client) ? 0 : 1;
      }
    }
    System.exit(exit);
  }

  private static void send(OkHttpClient client, URI base, IdempotencyKey key) throws Exception {
    IdempotentOperation op = IdempotentOperation.of("create-order").withKey(key).withReference("cart-2002");
    System.out.println("SENDING " + key);
    System.out.flush();
    try (Response r = client.newCall(new okhttp3.Request.Builder().url(base.resolve("/orders").toString())
        .post(okhttp3.RequestBody.create("{\"cart\":\"cart-2002\",\"amount\":1999}", DemoEnvironment.JSON))
        .tag(IdempotentOperation.class, op).build()).execute()) {
      System.out.println("UNEXPECTED " + r.code());
    }
  }

  private static boolean resume(IdempotentExecutor executor, IdemOkHttp idem, OkHttpClient client) throws Exception {
    boolean[] ok = {false};
    ResumeHandler handler = ResumeHandler.of(idem.transport(client),
        outcome -> {
          System.out.println("RESUMED " + outcome.key() + " " + outcome.response().status() + " replayed="
              + outcome.replayed());
          ok[0] = true;
        },
        failure -> System.out.println("NOT-RESUMED " + failure.key() + " " + failure.state() + " " + failure.getMessage()));
    // The dead process's lease must expire before anyone may take its operation over.
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!ok[0] && System.nanoTime() < deadline) {
      ResumeSummary s = executor.resumePending(Map.of("create-order", handler));
      if (s.examined() == 0) {
        Thread.sleep(200);
      }
    }
    return ok[0];
  }
}
