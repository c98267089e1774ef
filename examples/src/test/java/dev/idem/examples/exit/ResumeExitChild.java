package dev.idem.examples.exit;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.jdbc.JdbcJournal;
import java.io.InterruptedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The app of {@link ResumeExitTest}, in a child JVM: an outbox-style app that journals orders with
 * {@code enqueue} and delivers them with {@code resumePending}, confirming each order in its resume
 * handler (printed {@code CONFIRMED <key> fromJournal=<b> replayed=<b>}). Its {@code main} returns
 * without closing anything. The journal defers its commits for an hour, so that what survives the
 * exit is what the journal made durable on purpose.
 *
 * <p>Arguments: journal directory, server base URL, {@code first} (enqueue and deliver) or
 * {@code restart} (only resume), count.
 */
public final class ResumeExitChild {
  static final String OPERATION = "create-order";
  static final long SEED = 24;

  private ResumeExitChild() {
  }

  /** The keys of the orders, in order, so that the parent knows them. */
  static List<IdempotencyKey> keys(int count) {
    Random random = new Random(SEED);
    List<IdempotencyKey> keys = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      keys.add(IdempotencyKey.generate(random));
    }
    return keys;
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    URI base = URI.create(args[1]);
    boolean first = args[2].equals("first");
    int count = Integer.parseInt(args[3]);
    JdbcJournal journal = JdbcJournal.embedded(dir).deferredCommitInterval(Duration.ofHours(1)).open();
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).owner("app").build();
    if (first) {
      List<IdempotencyKey> keys = keys(count);
      for (int i = 0; i < count; i++) {
        RequestSnapshot order = RequestSnapshot.builder("POST", base.resolve("/orders"))
            .body(("{\"order\":" + i + "}").getBytes(StandardCharsets.UTF_8), "application/json").build();
        executor.enqueue(Operation.builder(OPERATION, order).key(keys.get(i)).build());
      }
    }
    ResumeSummary summary = executor.resumePending(Map.of(OPERATION, ResumeHandler.of(transport(),
        o -> System.out.println("CONFIRMED " + o.key() + " fromJournal=" + o.fromJournal() + " replayed="
            + o.replayed()),
        f -> System.out.println("NOT-CONFIRMED " + f.key() + " " + f.state() + " " + f.getMessage()))));
    System.out.println("SUMMARY " + summary);
    // main returns: the journal is not closed, as in a program that simply ends
  }

  /** Sends a journaled snapshot with its key through java.net.http. */
  private static Transport transport() {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    return (request, key) -> {
      HttpRequest.Builder b = HttpRequest.newBuilder(request.uri()).timeout(Duration.ofSeconds(10))
          .method(request.method(), HttpRequest.BodyPublishers.ofByteArray(request.body()));
      request.headers().forEach((name, values) -> values.forEach(v -> b.header(name, v)));
      b.header("Idempotency-Key", key.value());
      try {
        HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        return new ResponseSnapshot(r.statusCode(), r.headers().map(), r.body());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted");
      }
    };
  }
}
