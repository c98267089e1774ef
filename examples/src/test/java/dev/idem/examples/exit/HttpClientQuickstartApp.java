package dev.idem.examples.exit;

import dev.idem.core.OperationException;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.httpclient.IdempotentHttpClient;
import dev.idem.httpclient.IdempotentHttpResponse;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.Map;

/**
 * The README's java.net.http quickstart as a new user copies it into a {@code main}, and its
 * resume with {@code resumeTransport()}: nothing is closed, and main ends as
 * {@link AppArgs#ending()} says. One order per call, one after the other; each caller's outcome is
 * printed (and confirmed when SUCCEEDED). The only addition to the quickstart is a short retry
 * policy on the call.
 */
public final class HttpClientQuickstartApp {
  private HttpClientQuickstartApp() {
  }

  public static void main(String[] args) throws Exception {
    AppArgs app = AppArgs.parse(args);
    Orders orders = new Orders(app.confirmations());

    IdempotentHttpClient client = IdempotentHttpClient.create(JdbcJournal.openEmbedded(app.dir()));

    if (app.resume()) {
      ResumeSummary summary = client.idempotentExecutor().resumePending(Map.of(
          AppArgs.OPERATION, ResumeHandler.of(client.resumeTransport(),
              outcome -> orders.confirm(outcome.key()),
              failure -> orders.flag(failure.key(), failure.state()))));
      System.out.println("RESUMED " + summary);
    } else {
      for (int i = 0; i < app.orders(); i++) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(app.url()))
            .header("Content-Type", "application/json")
            .POST(BodyPublishers.ofString(AppArgs.json(i)))
            .build();
        try {
          IdempotentHttpResponse<String> response = client.operation(AppArgs.OPERATION).policy(AppArgs.POLICY)
              .send(request, BodyHandlers.ofString());
          orders.told(response.operationId().key(), response.state());
          if (response.statusCode() / 100 == 2) {
            orders.confirm(response.operationId().key());
          }
        } catch (OperationException e) {
          orders.told(e.key(), e.state());
        }
      }
    }
    app.ending().end();
  }
}
