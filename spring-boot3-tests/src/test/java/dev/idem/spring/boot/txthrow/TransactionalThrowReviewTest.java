package dev.idem.spring.boot.txthrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.spring.boot.TransactionalTomcatTest;
import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.servlet.ModelAndView;

/**
 * Review (guard23): docs/spring.md, transactional mode: "A handler that throws rolls everything
 * back, so its retry runs again." A handler that throws Spring's own {@link ResponseStatusException}
 * (or any exception an {@code @ExceptionHandler} / {@code @ControllerAdvice} answers) after its
 * write does not: Spring MVC turns the exception into a response inside the dispatch, the guard
 * sees a 409 answer, stores it (STORE_ALL_BUT_503) and commits the handler's half-done write with
 * it. The write the handler meant to abandon is committed, and every retry gets the stored 409.
 */
@SpringBootTest(classes = TransactionalThrowReviewTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TransactionalThrowReviewTest extends TransactionalTomcatTest {
  @SpringBootApplication
  @Import(Orders.class)
  static class App {}

  @RestController
  static class Orders {
    private final JdbcTemplate jdbc;

    Orders(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PostMapping("/tx-orders")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent(transactional = true)
    Map<String, Object> create(@RequestBody Map<String, Object> order) {
      jdbc.update("INSERT INTO orders(item) VALUES (?)", String.valueOf(order.get("item")));
      if ("out-of-stock".equals(order.get("item"))) {
        // A check after the write fails: the handler throws, expecting its write to roll back.
        throw new ResponseStatusException(HttpStatus.CONFLICT, "out of stock");
      }
      return Map.of("item", order.get("item"));
    }

    /** Calls per item: the first one of each item throws after its write, the next ones succeed. */
    final Map<String, AtomicInteger> calls = new java.util.concurrent.ConcurrentHashMap<>();

    /** Thrown after the write; answered 409 by an exception handler (a body, or a view). */
    static final class OutOfStock extends RuntimeException {
      OutOfStock(String item) {
        super(item);
      }
    }

    @PostMapping("/tx-advised/{answer}")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent(transactional = true)
    Map<String, Object> advised(@PathVariable String answer, @RequestBody Map<String, Object> order) {
      String item = String.valueOf(order.get("item"));
      jdbc.update("INSERT INTO orders(item) VALUES (?)", item);
      if (calls.computeIfAbsent(item, i -> new AtomicInteger()).incrementAndGet() == 1) {
        throw new OutOfStock(item);
      }
      return Map.of("item", item);
    }

    @ExceptionHandler(OutOfStock.class)
    Object outOfStock(OutOfStock e, jakarta.servlet.http.HttpServletRequest request) {
      if (request.getRequestURI().endsWith("/view")) {
        // A view, not a body: DispatcherServlet does not set EXCEPTION_ATTRIBUTE for this one.
        return new ModelAndView((model, req, res) -> {
          res.setStatus(409);
          res.setContentType("text/plain");
          res.getWriter().write("out of stock (view): " + e.getMessage());
        });
      }
      return ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("error", "out of stock", "item", e.getMessage()));
    }
  }

  @Autowired
  Orders orders;

  @Test
  void aHandlerThatThrowsAfterItsWriteLeavesNoRow() throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/tx-orders"))
        .header("Content-Type", "application/json").header("Idempotency-Key", "k-throw")
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"out-of-stock\"}")).build(),
        HttpResponse.BodyHandlers.ofString());

    assertEquals(409, r.statusCode(), r.body());
    assertEquals(0, rows("out-of-stock"),
        "the handler threw after its INSERT; transactional mode promises everything rolls back");
  }

  @Test
  void anExceptionHandlersAnswerIsSentNotStoredAndTheRetryRunsTheHandlerAgain() throws Exception {
    retryRunsAgain("body", "advised-body");
  }

  @Test
  void anExceptionHandlersViewIsSentNotStoredAndTheRetryRunsTheHandlerAgain() throws Exception {
    retryRunsAgain("view", "advised-view");
  }

  private void retryRunsAgain(String answer, String item) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/tx-advised/" + answer))
        .header("Content-Type", "application/json").header("Idempotency-Key", "k-" + item)
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"" + item + "\"}")).build();

    HttpResponse<String> first = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    assertEquals(409, first.statusCode(), first.body());
    assertTrue(first.body().contains("out of stock"), first.body());
    assertEquals(0, rows(item), "the handler threw after its INSERT: the write rolls back");

    HttpResponse<String> retried = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    assertEquals(201, retried.statusCode(), "the 409 was not stored: the retry runs the handler; " + retried.body());
    assertTrue(retried.headers().firstValue("Idempotent-Replayed").isEmpty(), "the retry ran the handler");
    assertEquals(1, rows(item));

    HttpResponse<String> replayed = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    assertEquals(201, replayed.statusCode(), replayed.body());
    assertEquals(Optional.of("true"), replayed.headers().firstValue("Idempotent-Replayed"));
    assertEquals(1, rows(item), "one row per key");
    assertEquals(2, orders.calls.get(item).get(), "the handler ran twice: once throwing, once succeeding");
  }
}
