package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Review: {@link StreamingBodyServer} reads a request body only by its {@code Content-Length}. A
 * request sent with {@code Transfer-Encoding: chunked} (the JDK client's
 * {@code BodyPublishers.ofInputStream}, OkHttp's streaming bodies) leaves its body unread; the
 * server answers and closes the socket with unread input, the kernel sends a reset, and the client
 * loses the answer ("HTTP/1.1 header parser received no bytes"), though the server counted the
 * request (each one an effect, says its Javadoc). A test of how a client handles a large response
 * then fails on the request side, or the client under test retries a request the server took.
 */
class StreamingBodyServerRequestBodyReviewTest {
  // Whether one request loses its answer depends on when the reset overtakes the client (about
  // one request in five with a 1 MiB body here); with 50 requests, one in a million runs passes.
  private static final int REQUESTS = 50;

  @Test
  void everyChunkedRequestGetsItsReply() throws Exception {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5)).build();
    byte[] body = new byte[1 << 20];
    List<String> lost = new ArrayList<>();
    try (StreamingBodyServer server = StreamingBodyServer.start(i -> StreamingBodyServer.Reply.of(201, 10, true))) {
      for (int i = 0; i < REQUESTS; i++) {
        HttpRequest request = HttpRequest.newBuilder(server.url()).header("Idempotency-Key", "k-" + i)
            .timeout(Duration.ofSeconds(10))
            .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body))).build();
        try {
          HttpResponse<byte[]> response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
          assertEquals(201, response.statusCode());
          assertEquals(10, response.body().length);
        } catch (IOException e) {
          lost.add("k-" + i + ": " + e);
        }
      }
      assertEquals(REQUESTS, server.requests(), "the server took every request");
      assertEquals(List.of(), lost, lost.size() + " of " + REQUESTS + " chunked requests lost their reply, though"
          + " the server counted each one");
    }
  }
}
