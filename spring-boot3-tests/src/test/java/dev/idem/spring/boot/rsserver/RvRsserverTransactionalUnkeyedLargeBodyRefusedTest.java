package dev.idem.spring.boot.rsserver;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.spring.boot.TransactionalTomcatTest;
import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A request WITHOUT an Idempotency-Key that the guard does not require one for (a PUT, or a POST to
 * {@code @Idempotent(keyRequired = false)}) "runs unguarded" (docs/server.md, "What it does": "Other
 * methods run unguarded without a key"; {@code Idempotent.keyRequired}: "Whether a request without a
 * key is refused with 400 (true, the default) or runs unguarded"). In lease mode it does: the
 * starter's filter passes it on untouched, however large its body. In transactional mode the
 * starter sends it through {@code TransactionalGuard.run} / {@code guard.joinTransaction} all the
 * same, and {@code TransactionalRun} reads its body up to the guard's {@code maxRequestBody}
 * (1 MiB, which the starter has no property for): a body over that is answered 413 "An idempotent
 * request body may have at most 1048576 bytes" and the handler never runs. So marking an upload
 * handler {@code @Idempotent(transactional = true)} silently caps every unkeyed upload to it at
 * 1 MiB (and buffers up to that much per request in memory), where the same handler in lease mode,
 * or unmarked, takes it.
 *
 * <p>Expected: the unkeyed request runs the handler (200), as it does in lease mode. Before a fix:
 * 413 from the guard, handler not run.
 */
@SpringBootTest(classes = RvRsserverTransactionalUnkeyedLargeBodyRefusedTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RvRsserverTransactionalUnkeyedLargeBodyRefusedTest extends TransactionalTomcatTest {
  /** 2 MiB: over the guard's 1 MiB request cap, far below Tomcat's and Spring's limits. */
  private static final int SIZE = 2 * 1024 * 1024;

  @SpringBootApplication
  @Import(Documents.class)
  static class App {}

  @RestController
  static class Documents {
    private final JdbcTemplate jdbc;

    Documents(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @PutMapping("/tx-documents")
    @Idempotent(transactional = true)
    String putTransactional(@RequestBody byte[] body) {
      jdbc.update("INSERT INTO orders(item) VALUES (?)", "tx-put-" + body.length);
      return "stored " + body.length;
    }

    @PostMapping("/tx-uploads")
    @Idempotent(transactional = true, keyRequired = false)
    String postTransactional(@RequestBody byte[] body) {
      jdbc.update("INSERT INTO orders(item) VALUES (?)", "tx-post-" + body.length);
      return "stored " + body.length;
    }

    @PutMapping("/lease-documents")
    @Idempotent
    String putLease(@RequestBody byte[] body) {
      return "stored " + body.length;
    }
  }

  private HttpResponse<String> unkeyed(String method, String path) throws Exception {
    byte[] body = "x".repeat(SIZE).getBytes(StandardCharsets.US_ASCII);
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("Content-Type", "application/octet-stream")
        .method(method, HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void leaseModeRunsAnUnkeyedLargePut() throws Exception {
    HttpResponse<String> r = unkeyed("PUT", "/lease-documents");
    assertEquals(200, r.statusCode(), "the reference: lease mode passes an unkeyed request on; " + r.body());
  }

  @Test
  void transactionalModeRunsAnUnkeyedLargePut() throws Exception {
    HttpResponse<String> r = unkeyed("PUT", "/tx-documents");
    assertEquals(200, r.statusCode(), "a PUT without a key runs unguarded, yet the transactional guard answered: "
        + r.body());
    assertEquals(1, rows("tx-put-" + SIZE));
  }

  @Test
  void transactionalModeRunsAnUnkeyedLargePostWhereNoKeyIsRequired() throws Exception {
    HttpResponse<String> r = unkeyed("POST", "/tx-uploads");
    assertEquals(200, r.statusCode(), "keyRequired = false: a POST without a key runs unguarded, yet the"
        + " transactional guard answered: " + r.body());
    assertEquals(1, rows("tx-post-" + SIZE));
  }
}
