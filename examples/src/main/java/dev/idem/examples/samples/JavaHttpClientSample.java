package dev.idem.examples.samples;

import dev.idem.httpclient.IdempotentHttpClient;
import dev.idem.httpclient.IdempotentHttpResponse;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.testkit.IdempotentServer;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** java.net.http, synchronous and asynchronous, through the Idem decorator. */
public final class JavaHttpClientSample {
  private JavaHttpClientSample() {}

  /** Sends one order synchronously and one asynchronously; returns both bodies. */
  public static List<String> run(IdempotentServer server, Path journalDir) throws Exception {
    // As in the README's quickstart; closed in reverse order: the client (and the executor it made),
    // then the journal, which stays the app's.
    try (JdbcJournal journal = JdbcJournal.openEmbedded(journalDir);
        IdempotentHttpClient client = IdempotentHttpClient.create(journal)) {
      HttpRequest request = HttpRequest.newBuilder(server.url("/orders"))
          .header("Content-Type", "application/json")
          .header("Authorization", "Bearer kept-out-of-the-journal")
          .POST(HttpRequest.BodyPublishers.ofString("{\"cart\":\"cart-7\",\"amount\":500}"))
          .build();

      IdempotentHttpResponse<String> sync = client.operation("create-order").reference("cart-7")
          .send(request, BodyHandlers.ofString());

      IdempotentHttpResponse<String> async = client.operation("create-order").reference("cart-8")
          .sendAsync(request, BodyHandlers.ofString())
          .get(30, TimeUnit.SECONDS);
      return List.of(sync.body(), async.body());
    }
  }

  public static void main(String[] args) throws Exception {
    try (IdempotentServer server = IdempotentServer.start()) {
      run(server, Files.createTempDirectory("idem-jdk-")).forEach(System.out::println);
    }
  }
}
