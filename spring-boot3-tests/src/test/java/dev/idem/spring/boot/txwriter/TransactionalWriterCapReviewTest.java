package dev.idem.spring.boot.txwriter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.RecordStats;
import dev.idem.spring.boot.TransactionalTomcatTest;
import dev.idem.spring.server.Idempotent;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A transactional handler that writes its answer through {@code response.getWriter()} and does not
 * flush it (the usual way: the container flushes at the end). The writer's encoder holds up to 8 KiB
 * of text before it reaches the held body, so an answer over {@code idem.server.max-buffered-body-bytes}
 * is only found over the limit when the guard flushes the writer to take the answer, after the
 * check for an overflow: the run must still roll back, store nothing and answer 500, not commit the
 * handler's writes and store and send a cut (here empty) answer that every retry then replays.
 */
@SpringBootTest(classes = TransactionalWriterCapReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = "idem.server.max-buffered-body-bytes=" + TransactionalWriterCapReviewTest.CAP)
class TransactionalWriterCapReviewTest extends TransactionalTomcatTest {
  static final int CAP = 4096;

  @SpringBootApplication
  @Import(Reports.class)
  static class App {}

  @RestController
  static class Reports {
    private final JdbcTemplate jdbc;
    final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

    Reports(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    /** Writes its row, then {@code chars} characters of text through the writer, unflushed. */
    @PostMapping("/tx-writer/{item}/{chars}")
    @Idempotent(transactional = true)
    void writer(@PathVariable String item, @PathVariable int chars, HttpServletResponse response) throws IOException {
      runs.computeIfAbsent(item, i -> new AtomicInteger()).incrementAndGet();
      jdbc.update("INSERT INTO orders(item) VALUES (?)", item);
      response.setStatus(201);
      response.setContentType("text/plain");
      response.getWriter().write("x".repeat(chars));
    }
  }

  @Autowired
  Reports reports;
  @Autowired
  IdempotencyGuard guard;

  @Test
  void anUnflushedWritersAnswerOverTheCapRollsBackInsteadOfCommittingACutAnswer() throws Exception {
    long completedBefore = guard.stats().completed();
    int chars = CAP + 1000;  // over the cap, under the writer's own 8 KiB buffer
    HttpRequest request = post("/tx-writer/w/" + chars, "k-writer");

    HttpResponse<byte[]> first = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());

    assertEquals(0, rows("w"), "the handler's write was committed although its answer (" + chars
        + " bytes) is over the " + CAP + " held; the client got " + first.statusCode() + " with "
        + first.body().length + " bytes");
    RecordStats s = guard.stats();
    assertEquals(completedBefore, s.completed(), "a record of the cut answer was stored: " + s);
    assertEquals(500, first.statusCode());

    HttpResponse<byte[]> retried = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(2, reports.runs.get("w").get(), "the retry ran the handler again instead of a replay of "
        + retried.body().length + " bytes");
  }
}
