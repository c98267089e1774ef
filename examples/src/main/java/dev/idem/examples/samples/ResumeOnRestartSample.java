package dev.idem.examples.samples;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.testkit.IdempotentServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import okhttp3.OkHttpClient;

/**
 * What an app does at startup: register a handler per operation name, then resume whatever the
 * journal still holds. Each pending operation goes out with its journaled key; the app's own
 * OkHttp interceptors add Authorization again, since it was never journaled.
 */
public final class ResumeOnRestartSample {
  private ResumeOnRestartSample() {}

  /**
   * Journals an order as the previous process would have (without sending it), then resumes it
   * as the restarted process; returns the lines the handler printed.
   */
  public static List<String> run(IdempotentServer server, Path journalDir) throws Exception {
    // The previous run: the order was journaled, then the process died before sending it.
    try (JdbcJournal journal = JdbcJournal.openEmbedded(journalDir);
        IdempotentExecutor before = IdempotentExecutor.builder().journal(journal).build()) {
      before.enqueue(Operation.builder("create-order", dev.idem.core.spi.RequestSnapshot
          .builder("POST", server.url("/orders"))
          .body("{\"cart\":\"cart-99\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8), "application/json")
          .build()).reference("cart-99").build());
    }

    // The restarted app.
    List<String> log = new CopyOnWriteArrayList<>();
    try (JdbcJournal journal = JdbcJournal.openEmbedded(journalDir);
        IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build()) {
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      // The app's client as in the README: Idem installed, then the interceptor that re-adds the
      // secret the journal never held.
      OkHttpClient client = idem.install(new OkHttpClient.Builder())
          .addInterceptor(chain -> chain.proceed(chain.request().newBuilder()
              .header("Authorization", "Bearer fresh-token").build()))
          .build();
      ResumeSummary summary = executor.resumePending(Map.of(
          "create-order", ResumeHandler.of(idem.transport(client),
              outcome -> log.add("order delivered: key " + outcome.key() + ", HTTP " + outcome.response().status()),
              failure -> log.add("order not delivered: " + failure.state() + ", " + failure.getMessage()))));
      log.add("resumed " + summary.examined() + ", succeeded " + summary.succeeded());
      for (OperationRecord r : executor.findByReference("default", "cart-99")) {
        log.add("cart-99 is " + r.state());
      }
    }
    return log;
  }

  public static void main(String[] args) throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      run(server, Files.createTempDirectory("idem-resume-")).forEach(System.out::println);
    }
  }
}
