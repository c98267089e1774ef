package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Review (rv-testkit): the reference server now refuses any body over 1 MiB with 413, and
 * {@link IdempotentServer.Builder#maxBodySize} raises the limit, but the program for "clients in
 * any language" has no flag for it. Idem's own clients take keyed bodies up to a configurable
 * size ({@code maxBodyBytes}, {@code idem.client.max-body-bytes}); a client tested against
 * IdempotentServerMain with a 2 MiB upload (a document, an image, a batch) gets 413 on every
 * attempt, and nothing the user can pass on the command line changes it: the flag is refused as
 * bad usage (exit 2).
 */
class IdempotentServerMainBodyLimitReviewTest {
  private final TestClient client = new TestClient();

  @Test
  void theProgramCanBeStartedWithALargerBodyLimitForUploads() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    AtomicInteger uploadStatus = new AtomicInteger(-1);
    String twoMiB = "{\"doc\":\"" + "x".repeat(2 << 20) + "\"}";

    int exit = IdempotentServerMain.run(new String[] {"--max-body-size", Integer.toString(4 << 20)},
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
        server -> {
          try {
            uploadStatus.set(client.post(server.url("/documents"), "k-upload", twoMiB).status());
          } catch (java.io.IOException e) {
            throw new AssertionError(e);
          }
        });

    assertEquals(0, exit, "stderr: " + err.toString(StandardCharsets.UTF_8));
    assertEquals(201, uploadStatus.get(), "a 2 MiB upload under --max-body-size 4 MiB");
  }
}
