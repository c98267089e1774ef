package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transport;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;

/**
 * A resumed or queued attempt through {@code transport(client)} is never unbounded: a client built
 * with no read and no call timeout (and a retry policy without attemptTimeout) would otherwise wait
 * forever on a server that accepts and never answers, holding the outbox's lane and lease. Read
 * from the call each attempt runs as (an app interceptor sees it, then refuses to connect, so
 * nothing waits).
 */
class ResumeAttemptBoundTest {
  private static final URI URL = URI.create("http://127.0.0.1:9/orders");
  final Fixture f = new Fixture();

  @Test
  void aClientWithoutTimeoutsGetsThirtySecondsPerAttempt() throws Exception {
    assertEquals(Duration.ofSeconds(30), callTimeoutOf(new OkHttpClient.Builder()
        .readTimeout(0, TimeUnit.SECONDS).writeTimeout(0, TimeUnit.SECONDS), null));
  }

  @Test
  void aClientsOwnReadTimeoutIsLeftToBoundIt() throws Exception {
    assertEquals(Duration.ZERO, callTimeoutOf(new OkHttpClient.Builder(), null)); // OkHttp's default 10 s read timeout
  }

  @Test
  void aClientsOwnCallTimeoutIsKept() throws Exception {
    assertEquals(Duration.ofSeconds(5), callTimeoutOf(new OkHttpClient.Builder().readTimeout(0, TimeUnit.SECONDS)
        .callTimeout(5, TimeUnit.SECONDS), null));
  }

  @Test
  void aJournaledRequestTimeoutBoundsTheCall() throws Exception {
    assertEquals(Duration.ofMillis(500), callTimeoutOf(new OkHttpClient.Builder(), Duration.ofMillis(500)));
  }

  private Duration callTimeoutOf(OkHttpClient.Builder client, Duration requestTimeout) {
    AtomicLong seen = new AtomicLong(-1);
    OkHttpClient app = client.retryOnConnectionFailure(false).addInterceptor(chain -> {
      seen.set(chain.call().timeout().timeoutNanos());
      throw new ConnectException("refused"); // nothing on the wire, nothing to wait for
    }).build();
    Transport transport = f.idem().transport(app);
    RequestSnapshot snapshot = RequestSnapshot.builder("POST", URL)
        .body("{}".getBytes(StandardCharsets.UTF_8), "application/json").timeout(requestTimeout).build();
    assertThrows(IOException.class, () -> transport.send(snapshot, IdempotencyKey.generate()));
    return Duration.ofNanos(seen.get());
  }
}
