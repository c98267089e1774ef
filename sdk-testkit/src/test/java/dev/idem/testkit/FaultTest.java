package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.TestClient.Answer;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Each fault does what its Javadoc says, to the client and to the effect. */
class FaultTest {
  /**
   * A thread per task: these tasks block until each other's progress, and from JDK 25 on the
   * default async pool of a 2-CPU machine (parallelism 1) runs them one after the other.
   */
  private static final java.util.concurrent.Executor THREAD_PER_TASK = task -> new Thread(task).start();

  private static final String ORDER = "{\"sku\":\"A1\"}";

  @RegisterExtension
  final IdempotentServerExtension idem = new IdempotentServerExtension();

  private final TestClient client = new TestClient();

  @Test
  void commitThenDropResponseLosesTheAnswerButNotTheEffect() throws Exception {
    IdempotentServer server = idem.server();
    URI url = server.url("/orders");
    server.plan().next(Fault.commitThenDropResponse());

    assertThrows(IOException.class, () -> client.post(url, "k-lost", ORDER));
    assertEquals(1, server.effectCount("k-lost"), "the effect happened although the client saw a failure");

    Answer retry = client.post(url, "k-lost", ORDER);
    assertEquals(201, retry.status());
    assertTrue(retry.isReplay());
    assertTrue(retry.body().contains("\"id\":\"ord_1\""), retry.body());
    assertEquals(1, server.effectCount("k-lost"));
  }

  @Test
  void dropRequestFailsTheClientWithoutAnEffect() throws Exception {
    IdempotentServer server = idem.server();
    URI url = server.url("/orders");
    server.plan().next(Fault.dropRequest());

    assertThrows(IOException.class, () -> client.post(url, "k-drop", ORDER));
    assertEquals(0, server.effectCount("k-drop"));

    Answer retry = client.post(url, "k-drop", ORDER);
    assertEquals(201, retry.status());
    assertFalse(retry.isReplay(), "nothing was stored, so the retry is the first real attempt");
    assertEquals(1, server.effectCount("k-drop"));
    assertEquals(2, server.requestCount(), "the dropped request was still received");
  }

  @Test
  void statusFaultsRejectWithoutAnEffectUntilTheyRunOut() throws Exception {
    IdempotentServer server = idem.server();
    URI url = server.url("/orders");
    server.plan().forNext(2, Fault.status(503));

    Answer first = client.post(url, "k-503", ORDER);
    Answer second = client.post(url, "k-503", ORDER);
    assertEquals(503, first.status());
    assertEquals(503, second.status());
    assertEquals(0, server.effectCount("k-503"));

    Answer third = client.post(url, "k-503", ORDER);
    assertEquals(201, third.status());
    assertFalse(third.isReplay());
    assertEquals(1, server.effectCount("k-503"));
    assertEquals(0, server.plan().pending());
  }

  @Test
  void tooManyRequestsAnnouncesRetryAfterInSecondsAndAsHttpDate() throws Exception {
    Clock clock = Clock.fixed(Instant.parse("2026-11-03T08:49:37.250Z"), ZoneOffset.UTC);
    try (IdempotentServer server = IdempotentServer.builder().clock(clock).start()) {
      URI url = server.url("/orders");
      server.plan()
          .next(Fault.tooManyRequests(Duration.ofMillis(1500)))
          .next(Fault.tooManyRequestsUntil(Duration.ofSeconds(30)));

      Answer seconds = client.post(url, "k-429", ORDER);
      Answer date = client.post(url, "k-429", ORDER);

      assertEquals(429, seconds.status());
      assertEquals("2", seconds.retryAfter(), "1.5 s rounds up, never down to an immediate retry");
      assertEquals(429, date.status());
      assertEquals("Tue, 03 Nov 2026 08:50:07 GMT", date.retryAfter());
      assertEquals(0, server.effectCount("k-429"));
    }
  }

  @Test
  void commitThenStatusFailsTheAnswerButARetryReplaysTheSuccess() throws Exception {
    IdempotentServer server = idem.server();
    URI url = server.url("/orders");
    server.plan().next(Fault.commitThenStatus(500));

    Answer failed = client.post(url, "k-500", ORDER);
    assertEquals(500, failed.status());
    assertEquals(1, server.effectCount("k-500"));

    Answer retry = client.post(url, "k-500", ORDER);
    assertEquals(201, retry.status());
    assertTrue(retry.isReplay());
    assertEquals(1, server.effectCount("k-500"));
  }

  @Test
  void commitThenDelayResponseTimesTheClientOutAfterTheEffect() throws Exception {
    IdempotentServer server = idem.server();
    URI url = server.url("/orders");
    server.plan().next(Fault.commitThenDelayResponse(Duration.ofMillis(400)));
    TestClient impatient = new TestClient(Duration.ofMillis(100));

    assertThrows(InterruptedIOException.class, () -> impatient.post(url, "k-slow", ORDER));
    // The timeout proves nothing about the server's progress (a cold JVM can take longer than the
    // client's 100 ms to get there), so wait for the effect rather than assume it.
    assertTrue(server.awaitEffects("k-slow", 1, Duration.ofSeconds(5)));
    assertEquals(1, server.effectCount("k-slow"), "the effect committed while the response was held");

    Answer retry = client.post(url, "k-slow", ORDER);
    assertTrue(retry.isReplay());
    assertEquals(1, server.effectCount("k-slow"));
  }

  @Test
  void closeCutsShortAHeldResponse() throws Exception {
    IdempotentServer server = IdempotentServer.start();
    CompletableFuture<Answer> call;
    try {
      server.plan().next(Fault.commitThenDelayResponse(Duration.ofSeconds(30)));
      URI url = server.url("/orders");
      call = CompletableFuture.supplyAsync(() -> {
        try {
          return new TestClient(Duration.ofSeconds(60)).post(url, "k-held", ORDER);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }, THREAD_PER_TASK);
      assertTrue(server.awaitEffects("k-held", 1, Duration.ofSeconds(5)));
    } finally {
      long start = System.nanoTime();
      server.close();
      assertTrue(Duration.ofNanos(System.nanoTime() - start).compareTo(Duration.ofSeconds(2)) < 0,
          "close must not wait out the 30 s delay");
    }
    ExecutionException e = assertThrows(ExecutionException.class, () -> call.get(5, TimeUnit.SECONDS));
    assertInstanceOf(UncheckedIOException.class, e.getCause());
  }

  @Test
  void extraHeadersGoOnTheFaultsOwnResponseAndAreNeverStored() throws Exception {
    IdempotentServer server = idem.server();
    URI url = server.url("/orders");
    server.plan()
        .next(Fault.status(503).withHeader("Retry-After", "soon-ish, maybe"))
        .next(Fault.status(400).withHeader("X-Should-Retry", "true"))
        .next(Fault.commitThenStatus(500).withHeader("X-Should-Retry", "true"));

    Answer garbage = client.post(url, "k-hdr", ORDER);
    assertEquals(503, garbage.status());
    assertEquals("soon-ish, maybe", garbage.retryAfter(), "sent as given, not parsed or checked");
    Answer hinted = client.post(url, "k-hdr", ORDER);
    assertEquals(400, hinted.status());
    assertEquals("true", hinted.header("X-Should-Retry"));
    assertEquals(0, server.effectCount("k-hdr"));

    Answer afterCommit = client.post(url, "k-hdr", ORDER);
    assertEquals(500, afterCommit.status());
    assertEquals("true", afterCommit.header("X-Should-Retry"));
    assertEquals(1, server.effectCount("k-hdr"));
    Answer replay = client.post(url, "k-hdr", ORDER);
    assertTrue(replay.isReplay());
    assertNull(replay.header("X-Should-Retry"), "the header went on the spoiled answer only");
    assertNull(garbage.replayed());
  }

  @Test
  void anExtraHeaderReplacesTheFaultsOwnAndAnEarlierOneOfTheSameName() throws Exception {
    IdempotentServer server = idem.server();
    server.plan().next(Fault.tooManyRequests(Duration.ofSeconds(3)).withHeader("retry-after", "later")
        .withHeader("X-Hint", "1").withHeader("x-hint", "2"));

    Answer a = client.post(server.url("/orders"), "k-replace", ORDER);

    assertEquals(429, a.status());
    assertEquals(List.of("later"), a.headers().values("Retry-After"));
    assertEquals(List.of("2"), a.headers().values("X-Hint"));
  }

  @Test
  void withHeaderIsRefusedWhereNoResponseOfTheFaultsOwnIsSent() {
    for (Fault silent : List.of(Fault.dropRequest(), Fault.commitThenDropResponse(),
        Fault.commitThenDelayResponse(Duration.ofMillis(1)), Fault.slowProcessing(Duration.ofMillis(1)))) {
      assertThrows(IllegalStateException.class, () -> silent.withHeader("X-Should-Retry", "true"), silent.toString());
    }
    Fault base = Fault.status(503);
    assertThrows(IllegalArgumentException.class, () -> base.withHeader("Bad Name", "x"));
    assertThrows(IllegalArgumentException.class, () -> base.withHeader("", "x"));
    assertThrows(IllegalArgumentException.class, () -> base.withHeader("X-Split", "a\r\nInjected: yes"));
    Fault hinted = base.withHeader("X-Should-Retry", "false");
    assertEquals("Fault.status(503)", base.toString(), "withHeader leaves the original alone");
    assertEquals("Fault.status(503).withHeader(X-Should-Retry, false)", hinted.toString());
  }

  @Test
  void perKeyFaultsHitOnlyThatKey() throws Exception {
    IdempotentServer server = idem.server();
    URI url = server.url("/orders");
    server.plan().forKey("k-victim", Fault.status(503));

    Answer bystander = client.post(url, "k-bystander", ORDER);
    Answer victim = client.post(url, "k-victim", ORDER);

    assertEquals(201, bystander.status());
    assertEquals(503, victim.status());
    assertEquals(0, server.effectCount("k-victim"));
  }
}
