package dev.idem.examples.exit;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationException;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.okhttp.IdempotencyResult;
import dev.idem.okhttp.IdempotentOperation;
import java.util.Map;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * The README's OkHttp quickstart as a new user copies it into a {@code main}, and its "Resume after
 * a restart": nothing is closed, and main ends as {@link AppArgs#ending()} says. One order per
 * call, one after the other; each caller's outcome is printed (and confirmed when SUCCEEDED).
 * The only addition to the quickstart is a short retry policy on the tag.
 */
public final class OkHttpQuickstartApp {
  private OkHttpQuickstartApp() {
  }

  public static void main(String[] args) throws Exception {
    AppArgs app = AppArgs.parse(args);
    Orders orders = new Orders(app.confirmations());

    IdemOkHttp idem = IdemOkHttp.create(JdbcJournal.openEmbedded(app.dir()));
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();

    if (app.resume()) {
      IdempotentExecutor executor = idem.executor();
      ResumeSummary summary = executor.resumePending(Map.of(
          AppArgs.OPERATION, ResumeHandler.of(idem.transport(client),
              outcome -> orders.confirm(outcome.key()),
              failure -> orders.flag(failure.key(), failure.state()))));
      System.out.println("RESUMED " + summary);
    } else {
      for (int i = 0; i < app.orders(); i++) {
        Request order = new Request.Builder().url(app.url())
            .post(RequestBody.create(AppArgs.json(i), MediaType.get("application/json")))
            .tag(IdempotentOperation.class, IdempotentOperation.of(AppArgs.OPERATION).withPolicy(AppArgs.POLICY))
            .build();
        try (Response response = client.newCall(order).execute()) {
          IdempotencyResult result = IdempotencyResult.of(response).orElseThrow();
          orders.told(result.operationId().key(), result.state());
          if (response.isSuccessful()) {
            orders.confirm(result.operationId().key());
          }
        } catch (OperationException e) {
          orders.told(e.key(), e.state());
        }
      }
    }
    app.ending().end();
  }
}
