package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.SequenceInputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.client.ClientHttpRequest;
import org.springframework.http.client.ClientHttpRequestFactory;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.web.client.RestClient;

/**
 * The same rule for RestClient: docs/client.md ("Responses stream") and {@code CaptureRule}: "A
 * body that breaks off or runs out of time is not kept, and never turns the answered attempt into
 * an unanswered one". {@code CapturedResponse.capture} reads the small 2xx body's prefix, and an
 * IOException from that read fails the whole attempt.
 *
 * <p>Found by a review on 2026-12-05 (webclient).
 */
class RestClientAnsweredAttemptReviewTest {
  private final InMemoryJournal journal = new InMemoryJournal();
  private final List<String> sent = new CopyOnWriteArrayList<>();
  private IdempotentExecutor executor;

  @AfterEach
  void stop() {
    if (executor != null) {
      executor.close();
    }
  }

  /**
   * The server answers 201 with {@code Content-Length: 8}, and the connection breaks after 3 bytes.
   * Expected: SUCCEEDED, sent once, the caller gets the 201 (and meets the broken body when it reads
   * on). Before a fix: the attempt is recorded "no response: IOException", and with no attempt left
   * the operation ends UNCERTAIN and the caller gets an OperationUncertainException.
   */
  @Test
  void a2xxWhoseSmallBodyBreaksOffIsAnsweredNotResent() throws Exception {
    executor = IdempotentExecutor.builder().journal(journal)
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    RestClient client = RestClient.builder().requestFactory(new BrokenBodyFactory())
        .requestInterceptor(IdempotencyInterceptor.builder(executor).build()).build();
    IdempotentCall call = IdempotentCall.named("create-order");

    int status;
    try {
      status = client.post().uri("http://api.example/orders").contentType(MediaType.APPLICATION_JSON)
          .attributes(call).body("{\"qty\":1}").exchange((req, res) -> res.getStatusCode().value(), false);
    } catch (RuntimeException e) {
      status = -1;
    }

    OperationRecord record = recordOf(call);
    assertEquals(OperationState.SUCCEEDED, record.state(),
        "the server answered 201, but the journal keeps " + record.state() + ": a body that broke off turned the"
            + " answered attempt into an unanswered one (" + record + ")");
    assertEquals(201, status, "the caller was not handed the server's 201");
    assertEquals(1, sent.size(), "an answered 2xx was sent again: " + sent);
  }

  private OperationRecord recordOf(IdempotentCall call) throws Exception {
    for (OperationState state : OperationState.values()) {
      for (OperationRecord r : journal.findByState(state, null, 100)) {
        if (r.id().key().equals(call.key().orElseThrow())) {
          return r;
        }
      }
    }
    throw new AssertionError("nothing journaled for " + call);
  }

  /** Every request is answered 201, Content-Length 8, and the body breaks after 3 bytes. */
  private final class BrokenBodyFactory implements ClientHttpRequestFactory {
    @Override
    public ClientHttpRequest createRequest(URI uri, HttpMethod method) {
      HttpHeaders headers = new HttpHeaders();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      return new ClientHttpRequest() {
        @Override
        public HttpMethod getMethod() {
          return method;
        }

        @Override
        public URI getURI() {
          return uri;
        }

        @Override
        public java.util.Map<String, Object> getAttributes() {
          return new java.util.HashMap<>();
        }

        @Override
        public HttpHeaders getHeaders() {
          return headers;
        }

        @Override
        public OutputStream getBody() {
          return out;
        }

        @Override
        public ClientHttpResponse execute() {
          sent.add(method + " " + uri);
          return new ClientHttpResponse() {
            private final HttpHeaders responseHeaders = new HttpHeaders();

            {
              responseHeaders.setContentType(MediaType.APPLICATION_JSON);
              responseHeaders.setContentLength(8);
            }

            @Override
            public HttpStatusCode getStatusCode() {
              return HttpStatusCode.valueOf(201);
            }

            @Override
            public String getStatusText() {
              return "Created";
            }

            @Override
            public HttpHeaders getHeaders() {
              return responseHeaders;
            }

            @Override
            public InputStream getBody() {
              return new SequenceInputStream(new ByteArrayInputStream("{\"i".getBytes(StandardCharsets.UTF_8)),
                  new InputStream() {
                    @Override
                    public int read() throws IOException {
                      throw new IOException("Connection reset by peer");
                    }
                  });
            }

            @Override
            public void close() {}
          };
        }
      };
    }
  }
}
