package dev.idem.examples.exit;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The app of {@link ResumeSigtermTest}, in a child JVM: it journals orders with {@code enqueue} and
 * delivers them with {@code resumePending} and {@code resumeConcurrency(4)} (the range
 * docs/fleet.md recommends), confirming each order in its resume handler. Its {@code main} closes
 * nothing, as the README's "How a program ends" allows.
 *
 * <p>In the {@code first} run the target answers the first {@link #ANSWERED} orders; every later
 * attempt is still on the wire (it never answers) when the service is stopped. Once all four lanes
 * wait on such an attempt, every handler call has returned, and the child prints {@code DONE}; the
 * parent then sends SIGTERM. The {@code restart} run resumes what is left, with nothing held back.
 *
 * <p>Arguments: journal directory, server base URL, {@code first} or {@code restart}, count.
 */
public final class ResumeSigtermChild {
  static final String OPERATION = "create-order";
  /** Orders the target answers in the first run before it stops answering. */
  static final int ANSWERED = 6;
  static final int LANES = 4;

  private ResumeSigtermChild() {
  }

  static List<IdempotencyKey> keys(int count) {
    return ResumeExitChild.keys(count);
  }

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    URI base = URI.create(args[1]);
    boolean first = args[2].equals("first");
    int count = Integer.parseInt(args[3]);
    JdbcJournal journal = JdbcJournal.openEmbedded(dir);
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).owner("app")
        .resumeConcurrency(LANES).build();
    if (first) {
      List<IdempotencyKey> keys = keys(count);
      for (int i = 0; i < count; i++) {
        RequestSnapshot order = RequestSnapshot.builder("POST", base.resolve("/orders"))
            .body(("{\"order\":" + i + "}").getBytes(StandardCharsets.UTF_8), "application/json").build();
        executor.enqueue(Operation.builder(OPERATION, order).key(keys.get(i)).build());
      }
    }
    ResumeSummary summary = executor.resumePending(Map.of(OPERATION, ResumeHandler.of(transport(first),
        o -> System.out.println("CONFIRMED " + o.key() + " fromJournal=" + o.fromJournal()),
        f -> System.out.println("NOT-CONFIRMED " + f.key() + " " + f.state()))));
    System.out.println("SUMMARY " + summary);
    System.out.println(MainEnding.DONE);
    // main returns: nothing closed, as in a program that simply ends
  }

  /**
   * Sends a journaled snapshot with its key through java.net.http. In the first run, the sends
   * after the first {@link #ANSWERED} hang (a target that stopped answering) until the JVM stops.
   */
  private static Transport transport(boolean first) {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    AtomicInteger sends = new AtomicInteger();
    AtomicInteger held = new AtomicInteger();
    CountDownLatch never = new CountDownLatch(1);
    return (request, key) -> {
      if (first && sends.incrementAndGet() > ANSWERED) {
        // Every lane reaches this only after its previous operation's handler returned and its
        // delivery was counted: once all lanes are here, no handler call is in progress.
        if (held.incrementAndGet() == LANES) {
          System.out.println(MainEnding.DONE);
          System.out.flush();
        }
        try {
          never.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        throw new InterruptedIOException("stopped while waiting for the target");
      }
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
