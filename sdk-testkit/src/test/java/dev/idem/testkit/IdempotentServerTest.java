package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.TestClient.Answer;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import okhttp3.Headers;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The protocol, proven by effects: each test counts how often the business action ran. */
class IdempotentServerTest {
  @RegisterExtension
  final IdempotentServerExtension idem = new IdempotentServerExtension();

  private final TestClient client = new TestClient();

  @Test
  void concurrentDuplicatesProduceExactlyOneEffect() throws Exception {
    IdempotentServer server = idem.server();
    URI url = server.url("/orders");
    int threads = 8;
    // Every request carries the fault, but only the one that claims the key is slowed; that keeps
    // the claim held while the seven others arrive, whichever of the eight wins the race.
    server.plan().forNext(threads, Fault.slowProcessing(Duration.ofMillis(500)));

    CountDownLatch go = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Answer>> answers = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        answers.add(pool.submit(() -> {
          go.await();
          return client.post(url, "k-burst", "{\"sku\":\"A1\",\"qty\":1}");
        }));
      }
      go.countDown();

      int fresh = 0;
      int inFlight = 0;
      int replays = 0;
      for (Future<Answer> f : answers) {
        Answer a = f.get(10, TimeUnit.SECONDS);
        if (a.status() == 409) {
          inFlight++;
          assertEquals("1", a.retryAfter());
          assertTrue(a.body().contains("still being processed"), a.body());
        } else {
          assertEquals(201, a.status(), a.body());
          if (a.isReplay()) {
            replays++;
          } else {
            fresh++;
          }
        }
      }
      assertEquals(1, fresh, "exactly one request ran the effect");
      assertEquals(threads - 1, inFlight + replays);
      assertTrue(inFlight >= 1, "the slow claim should have overlapped at least one duplicate");
      assertEquals(1, server.effectCount("k-burst"));
      assertEquals(1, server.totalEffects());
      assertEquals(threads, server.requestCount());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void repeatReplaysTheStoredReplyWithoutANewEffect() throws Exception {
    IdempotentServer server = idem.server();
    URI url = server.url("/orders");

    Answer first = client.post(url, "k-replay", "{\"sku\":\"A1\"}");
    Answer second = client.post(url, "k-replay", "{\"sku\":\"A1\"}");

    assertEquals(201, first.status());
    assertEquals("{\"id\":\"ord_1\",\"effect\":1,\"key\":\"k-replay\"}", first.body());
    assertFalse(first.isReplay());
    assertEquals(201, second.status());
    assertEquals(first.body(), second.body());
    assertEquals(first.contentType(), second.contentType());
    assertTrue(second.isReplay());
    assertEquals(1, server.effectCount("k-replay"));
  }

  @Test
  void differentPayloadUnderAUsedKeyIs422AndCanonicalJsonIsTheSamePayload() throws Exception {
    IdempotentServer server = idem.server();
    URI url = server.url("/orders");

    client.post(url, "k-reuse", "{\"sku\":\"A1\",\"qty\":1}");
    Answer reused = client.post(url, "k-reuse", "{\"sku\":\"B2\",\"qty\":1}");
    // Same JSON, other key order and spacing: RFC 8785 makes it the same fingerprint.
    Answer reordered = client.post(url, "k-reuse", "{ \"qty\": 1, \"sku\": \"A1\" }");

    assertEquals(422, reused.status());
    assertTrue(reused.body().contains("reused"), reused.body());
    assertEquals("application/problem+json", reused.contentType());
    assertTrue(reordered.isReplay());
    assertEquals(1, server.effectCount("k-reuse"));
  }

  @Test
  void postWithoutKeyIs400AndRunsNothing() throws Exception {
    IdempotentServer server = idem.server();

    Answer a = client.post(server.url("/orders"), null, "{\"sku\":\"A1\"}");

    assertEquals(400, a.status());
    assertTrue(a.body().contains("Idempotency-Key"), a.body());
    assertEquals(0, server.totalEffects());
    assertEquals(Optional.empty(), server.recordedRequests().get(0).keyHeader());
  }

  @Test
  void quotedAndBareSpellingsAreOneKey() throws Exception {
    IdempotentServer server = idem.server();
    URI url = server.url("/orders");

    Answer bare = client.post(url, "k-sf", "{}");
    Answer quoted = client.post(url, "\"k-sf\"", "{}");

    assertEquals(201, bare.status());
    assertTrue(quoted.isReplay());
    assertEquals(1, server.effectCount("k-sf"));
    assertEquals(Set.of("k-sf"), server.keysSeen());
    assertEquals(Optional.of("\"k-sf\""), server.recordedRequests().get(1).keyHeader());
  }

  @Test
  void everyRequestIsRecordedWithItsHeadersEvenWhenAFaultAnswersIt() throws Exception {
    IdempotentServer server = idem.server();
    server.plan().next(Fault.status(503));
    Headers sent = new Headers.Builder().add("Authorization", "Bearer t0ken")
        .add("X-Trace", "a").add("x-trace", "b").build();

    client.post(server.url("/orders"), "\"k-hdr\"", null, "{}", sent);
    client.post(server.url("/orders"), "\"k-hdr\"", null, "{}", sent);

    List<ReceivedRequest> received = server.recordedRequests();
    assertEquals(2, received.size());
    for (ReceivedRequest r : received) {
      assertEquals(Optional.of("Bearer t0ken"), r.header("Authorization"), "on the rejected one too");
      assertEquals(Optional.of("Bearer t0ken"), r.header("AUTHORIZATION"));
      assertEquals(List.of("a", "b"), r.headerValues("X-Trace"));
      assertEquals(Optional.of("\"k-hdr\""), r.header("Idempotency-Key"), "exactly as sent, quotes and all");
      assertEquals(r.keyHeader(), r.header("Idempotency-Key"));
      assertTrue(r.headers().containsKey("content-type"), r.headers().keySet().toString());
      r.headers().keySet().forEach(n -> assertEquals(n.toLowerCase(java.util.Locale.ROOT), n));
      assertFalse(r.toString().contains("t0ken"), "no header values in the string form: " + r);
    }
    assertEquals(Optional.empty(), received.get(0).header("Cookie"));
    assertEquals(List.of(), received.get(0).headerValues("Cookie"));
  }

  @Test
  void keysAreScopedByCallerAndOperation() throws Exception {
    IdempotentServer server = idem.server();

    Answer alice = client.post(server.url("/orders"), "k-shared", "alice", "{}");
    Answer bob = client.post(server.url("/orders"), "k-shared", "bob", "{}");
    Answer refund = client.post(server.url("/refunds"), "k-shared", "alice", "{}");

    assertFalse(alice.isReplay());
    assertFalse(bob.isReplay());
    assertFalse(refund.isReplay());
    assertEquals(3, server.effectCount("k-shared"));
    assertEquals("bob", server.recordedRequests().get(1).caller());
  }

  @Test
  void customHandlerRepliesAreStoredAndReplayed() throws Exception {
    try (IdempotentServer server = IdempotentServer.builder()
        .handler(r -> Reply.json(402, "{\"declined\":" + r.effectNumber() + ",\"body\":" + r.bodyUtf8() + "}"))
        .start()) {
      URI url = server.url("/charges");

      Answer first = client.post(url, "k-card", "{\"amount\":5}");
      Answer again = client.post(url, "k-card", "{\"amount\":5}");

      assertEquals(402, first.status());
      assertEquals("{\"declined\":1,\"body\":{\"amount\":5}}", first.body());
      assertEquals(402, again.status());
      assertTrue(again.isReplay());
      assertEquals(1, server.effectCount("k-card"));
    }
  }

  @Test
  void handlerServerErrorsAreNotStoredSoARetryRunsAgain() throws Exception {
    try (IdempotentServer server = IdempotentServer.builder()
        .handler(r -> r.effectNumber() == 1 ? Reply.json(503, "{}") : Reply.json(201, "{\"ok\":true}"))
        .start()) {
      URI url = server.url("/orders");

      Answer failed = client.post(url, "k-5xx", "{}");
      Answer retried = client.post(url, "k-5xx", "{}");

      assertEquals(503, failed.status());
      assertEquals(201, retried.status());
      assertNull(retried.replayed());
      assertEquals(2, server.effectCount("k-5xx"));
    }
  }

  /**
   * Over real HTTP, the reference server reads the key header by core's one parser: a key header
   * sent twice, or two joined into one line as an intermediary may join them, is refused and runs
   * nothing; the bare and the quoted spelling are one key.
   */
  @Test
  void aKeyHeaderTwiceOrJoinedIsRefusedAndBothSpellingsAreOneKey() throws Exception {
    IdempotentServer server = idem.server();
    URI url = server.url("/orders");
    Headers twice = new Headers.Builder().add("Idempotency-Key", "k3").add("Idempotency-Key", "k4").build();
    assertEquals(400, client.post(url, null, null, "{}", twice).status());
    for (String joined : List.of("k3, k4", "k3,k4")) {
      Answer refused = client.post(url, joined, "{}");
      assertEquals(400, refused.status(), joined);
      assertTrue(refused.body().contains("comma"), refused.body());
    }
    assertEquals(0, server.totalEffects());

    assertEquals(201, client.post(url, "k5", "{}").status());
    assertTrue(client.post(url, "\"k5\"", "{}").isReplay());
    assertEquals(1, server.effectCount("k5"));
    assertEquals(1, server.totalEffects());
  }
}
