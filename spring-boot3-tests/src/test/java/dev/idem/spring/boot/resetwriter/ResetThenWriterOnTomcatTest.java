package dev.idem.spring.boot.resetwriter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.TransactionalTomcatTest;
import dev.idem.spring.server.Idempotent;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Regression test (found by a review this session).
 *
 * <p>Review of f01ecce4: after {@code reset()} Tomcat lets a handler take the writer although it had
 * taken the output stream ({@code Response.reset()} clears {@code usingOutputStream} and
 * {@code usingWriter}).
 *
 * <p>A handler that began streaming an export through {@code getOutputStream()}, failed, and
 * answers a text error instead ({@code reset(); setStatus(422); getWriter().print(...)}) gets its
 * 422 to the client without the guard. Both held responses now refuse {@code getWriter()} after
 * {@code getOutputStream()} for the whole request: the transactional {@code BufferedResponse}'s
 * {@code reset()} forgets the writer but not {@code streamTaken}, and the lease-mode capture's
 * forgets neither. The guarded handler's {@code getWriter()} throws {@code IllegalStateException}:
 * the client gets a 500 in place of the handler's 422 (in transactional mode its writes are rolled
 * back; in lease mode the claim is released), and every retry fails the same way.
 */
@SpringBootTest(classes = ResetThenWriterOnTomcatTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ResetThenWriterOnTomcatTest extends TransactionalTomcatTest {

  @SpringBootApplication
  @Import(Exports.class)
  static class App {}

  @RestController
  static class Exports {
    @PostMapping("/rv-reset/plain")
    void plain(HttpServletResponse response) throws IOException {
      export(response);
    }

    @PostMapping("/rv-reset/lease")
    @Idempotent
    void lease(HttpServletResponse response) throws IOException {
      export(response);
    }

    @PostMapping("/rv-reset/tx")
    @Idempotent(transactional = true)
    void transactional(HttpServletResponse response) throws IOException {
      export(response);
    }

    /** Streams the first row of a CSV export, fails on the second, and answers a text error instead. */
    private static void export(HttpServletResponse response) throws IOException {
      response.setContentType("text/csv");
      response.getOutputStream().write("row 1\n".getBytes(StandardCharsets.US_ASCII));
      response.reset();
      response.setStatus(422);
      response.setContentType("text/plain;charset=UTF-8");
      response.getWriter().print("export failed at row 2");
    }
  }

  @Test
  void aTransactionalHandlerAnswersThroughTheWriterAfterResettingAStartedStream() throws Exception {
    assertPlain();
    HttpResponse<byte[]> guarded = send(post("/rv-reset/tx", "k-rv-reset-tx"));
    assertEquals(422, guarded.statusCode(), "transactional: " + text(guarded));
    assertEquals("export failed at row 2", text(guarded));
  }

  @Test
  void aLeaseModeHandlerAnswersThroughTheWriterAfterResettingAStartedStream() throws Exception {
    assertPlain();
    HttpResponse<byte[]> guarded = send(post("/rv-reset/lease", "k-rv-reset-lease"));
    assertEquals(422, guarded.statusCode(), "lease mode: " + text(guarded));
    assertEquals("export failed at row 2", text(guarded));
  }

  private void assertPlain() throws Exception {
    HttpResponse<byte[]> plain = send(post("/rv-reset/plain"));
    assertEquals(422, plain.statusCode(), "Tomcat's own reset, without the guard: " + text(plain));
    assertEquals("export failed at row 2", text(plain));
  }

  private static String text(HttpResponse<byte[]> r) {
    return new String(r.body(), StandardCharsets.UTF_8);
  }
}
