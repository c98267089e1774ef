package dev.idem.spring.boot.txbuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.RecordStats;
import dev.idem.spring.boot.TransactionalTomcatTest;
import dev.idem.spring.server.Idempotent;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
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
 * Review (guard24): transactional mode holds the handler's answer until its transaction commits,
 * in memory and with no cap (only what is stored is capped, by maxCapturedBody): a handler that
 * streams a huge body made the app hold all of it. The answer is now held up to
 * {@code idem.server.max-buffered-body-bytes}; past it the write fails, the transaction (claim and
 * writes) rolls back, nothing is stored, and the client gets a 500 instead of a cut answer, so a
 * retry with the same key runs the handler again and commits nothing either.
 */
@SpringBootTest(classes = TransactionalAnswerCapReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = "idem.server.max-buffered-body-bytes=" + TransactionalAnswerCapReviewTest.CAP)
class TransactionalAnswerCapReviewTest extends TransactionalTomcatTest {
  static final int CAP = 2 * 1024 * 1024;
  static final int HUGE = 32 * 1024 * 1024;

  @SpringBootApplication
  @Import(Reports.class)
  static class App {}

  @RestController
  static class Reports {
    private final JdbcTemplate jdbc;
    /** Handler runs per item. */
    final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    /** The most bytes one run of a handler got the response to take. */
    final AtomicLong mostAccepted = new AtomicLong();

    Reports(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    private void effect(String item) {
      runs.computeIfAbsent(item, i -> new AtomicInteger()).incrementAndGet();
      jdbc.update("INSERT INTO orders(item) VALUES (?)", item);
    }

    /** Writes its row, then streams {@code bytes} bytes through the output stream. */
    @PostMapping("/tx-stream/{item}/{bytes}")
    @Idempotent(transactional = true)
    void stream(@PathVariable String item, @PathVariable int bytes, HttpServletResponse response) throws IOException {
      effect(item);
      response.setStatus(201);
      response.setContentType("application/octet-stream");
      OutputStream out = response.getOutputStream();
      byte[] chunk = new byte[8192];
      long accepted = 0;
      try {
        for (int sent = 0; sent < bytes; sent += chunk.length) {
          out.write(chunk);
          accepted += chunk.length;
        }
      } finally {
        long a = accepted;
        mostAccepted.accumulateAndGet(a, Math::max);
      }
    }

    /** Writes its row, then text through a PrintWriter, which swallows the write's failure. */
    @PostMapping("/tx-writer/{item}/{chars}")
    @Idempotent(transactional = true)
    void writer(@PathVariable String item, @PathVariable int chars, HttpServletResponse response) throws IOException {
      effect(item);
      response.setStatus(201);
      response.setContentType("text/plain");
      PrintWriter w = response.getWriter();
      String line = "x".repeat(1023) + "\n";
      for (int sent = 0; sent < chars; sent += line.length()) {
        w.write(line);
      }
    }
  }

  @Autowired
  Reports reports;
  @Autowired
  IdempotencyGuard guard;

  @Test
  void aStreamedAnswerOverTheCapIsNotHeldRollsBackAndIsNotStoredAndTheRetryDoesTheSame() throws Exception {
    long completedBefore = guard.stats().completed();
    HttpRequest request = post("/tx-stream/huge-stream/" + HUGE, "k-huge-stream");

    HttpResponse<byte[]> first = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(500, first.statusCode(), "the answer cannot go out whole after the commit");
    assertTrue(reports.mostAccepted.get() <= CAP,
        "the response held at most the cap, not " + reports.mostAccepted.get() + " bytes");
    assertEquals(1, reports.runs.get("huge-stream").get());
    assertEquals(0, rows("huge-stream"), "the handler's write rolled back with its claim");
    assertNothingStored(completedBefore);

    HttpResponse<byte[]> retried = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(500, retried.statusCode());
    assertTrue(retried.headers().firstValue("Idempotent-Replayed").isEmpty(), "nothing stored to replay");
    assertEquals(2, reports.runs.get("huge-stream").get(), "the retry ran the handler again");
    assertEquals(0, rows("huge-stream"));
    assertNothingStored(completedBefore);
  }

  @Test
  void anAnswerOverTheCapWhoseFailureTheHandlerNeverSawStillRollsBack() throws Exception {
    long completedBefore = guard.stats().completed();
    HttpRequest request = post("/tx-writer/huge-writer/" + HUGE, "k-huge-writer");

    HttpResponse<byte[]> first = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(500, first.statusCode());
    assertEquals(0, rows("huge-writer"));
    assertNothingStored(completedBefore);

    HttpResponse<byte[]> retried = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(500, retried.statusCode());
    assertEquals(2, reports.runs.get("huge-writer").get());
    assertEquals(0, rows("huge-writer"));
    assertNothingStored(completedBefore);
  }

  @Test
  void anAnswerUnderTheCapButOverTheStoredCapIsSentWholeAndReplayedWithoutItsBody() throws Exception {
    int bytes = CAP - 8192; // over maxCapturedBody (1 MiB), under the cap
    HttpRequest request = post("/tx-stream/big-stream/" + bytes, "k-big-stream");

    HttpResponse<byte[]> first = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(201, first.statusCode());
    assertEquals(bytes, first.body().length);
    assertEquals(1, rows("big-stream"));

    HttpResponse<byte[]> replayed = HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(201, replayed.statusCode());
    assertEquals(Optional.of("true"), replayed.headers().firstValue("Idempotent-Replayed"));
    assertEquals(Optional.of("omitted"), replayed.headers().firstValue("Idempotent-Replay-Body"));
    assertEquals(1, reports.runs.get("big-stream").get());
    assertEquals(1, rows("big-stream"));
  }

  private void assertNothingStored(long completedBefore) {
    RecordStats s = guard.stats();
    assertEquals(0, s.inFlight() + s.stuck() + s.released(), s.toString());
    assertEquals(completedBefore, s.completed(), "no record for the key: " + s);
  }
}
