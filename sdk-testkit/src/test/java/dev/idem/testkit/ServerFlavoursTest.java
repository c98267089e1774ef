package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.FingerprintMode;
import dev.idem.testkit.TestClient.Answer;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Each server flavour of issue 16, proven by effects as well as by statuses. */
class ServerFlavoursTest {
  private final TestClient client = new TestClient();

  @ParameterizedTest(name = "reuse answered {0}")
  @ValueSource(ints = {422, 417, 409})
  void mismatchStatus(int status) throws Exception {
    try (IdempotentServer server = IdempotentServer.builder().mismatchStatus(status).start()) {
      URI url = server.url("/orders");
      client.post(url, "k", "{\"sku\":\"A1\"}");
      Answer reused = client.post(url, "k", "{\"sku\":\"B2\"}");
      assertEquals(status, reused.status());
      assertTrue(reused.body().contains("reused"), reused.body());
      assertNull(reused.retryAfter(), "a reuse is not 'retry later', even as a 409");
      assertEquals(1, server.effectCount("k"));
    }
  }

  @Test
  void aReusedBuilderStartsServersThatShareNoRecordsAndABadSettingIsRefusedAtOnce() throws Exception {
    IdempotentServer.Builder builder = IdempotentServer.builder().mismatchStatus(409);
    try (IdempotentServer first = builder.start(); IdempotentServer second = builder.start()) {
      assertEquals(201, client.post(first.url("/orders"), "k", "{}").status());
      assertEquals(201, client.post(second.url("/orders"), "k", "{\"sku\":\"B2\"}").status(),
          "the second server's store does not hold the first one's key");
      assertEquals(1, first.effectCount("k"));
      assertEquals(1, second.effectCount("k"));
      assertEquals(409, client.post(second.url("/orders"), "k", "{}").status(), "both play the builder's flavour");
    }
    // The guard's own rules and messages, at the setter, not at start().
    assertEquals("the mismatch status is a 4xx, not 500",
        assertThrows(IllegalArgumentException.class, () -> builder.mismatchStatus(500)).getMessage());
    assertThrows(IllegalArgumentException.class, () -> builder.inFlightWait(Duration.ofMinutes(6)));
    assertThrows(IllegalArgumentException.class, () -> builder.inFlightRetryAfter(Duration.ofSeconds(-1)));
    assertThrows(IllegalArgumentException.class, () -> builder.keyHeader(" "));
    assertThrows(IllegalArgumentException.class, () -> builder.callerHeader(""));
  }

  @Test
  void inFlightWithAndWithoutRetryAfter() throws Exception {
    for (boolean send : new boolean[] {true, false}) {
      try (IdempotentServer server = IdempotentServer.builder().sendInFlightRetryAfter(send).start()) {
        URI url = server.url("/orders");
        // Both carry the fault, but only the one that claims is slowed, whichever wins the race.
        server.plan().forKey("k", 2, Fault.slowProcessing(Duration.ofMillis(500)));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
          Future<Answer> a = pool.submit(() -> client.post(url, "k", "{}"));
          Future<Answer> b = pool.submit(() -> client.post(url, "k", "{}"));
          Answer x = a.get(5, TimeUnit.SECONDS);
          Answer y = b.get(5, TimeUnit.SECONDS);
          Answer dup = x.status() == 409 ? x : y;
          Answer done = x.status() == 409 ? y : x;
          assertEquals(409, dup.status());
          assertEquals(send ? "1" : null, dup.retryAfter());
          assertEquals(201, done.status());
          assertEquals(1, server.effectCount("k"));
        } finally {
          pool.shutdownNow();
        }
      }
    }
  }

  @Test
  void replayMarkerOnOrOff() throws Exception {
    try (IdempotentServer marked = IdempotentServer.start();
        IdempotentServer unmarked = IdempotentServer.builder().replayMarker(false).start()) {
      client.post(marked.url("/orders"), "k", "{}");
      client.post(unmarked.url("/orders"), "k", "{}");
      Answer a = client.post(marked.url("/orders"), "k", "{}");
      Answer b = client.post(unmarked.url("/orders"), "k", "{}");
      assertEquals("true", a.replayed());
      assertNull(b.replayed());
      assertEquals("{\"id\":\"ord_1\",\"effect\":1,\"key\":\"k\"}", b.body(), "still the stored reply");
      assertEquals(1, marked.effectCount("k"));
      assertEquals(1, unmarked.effectCount("k"));
    }
  }

  @Test
  void serverErrorsStoredAndReplayedOrRunAgain() throws Exception {
    EffectHandler failsFirst = r -> r.effectNumber() == 1 ? Reply.json(503, "{\"busy\":1}") : Reply.json(201, "{}");
    try (IdempotentServer storing = IdempotentServer.builder().handler(failsFirst).storeServerErrors(true).start();
        IdempotentServer releasing = IdempotentServer.builder().handler(failsFirst).start()) {
      for (int i = 0; i < 2; i++) {
        client.post(storing.url("/orders"), "k", "{}");
        client.post(releasing.url("/orders"), "k", "{}");
      }
      Answer stored = client.post(storing.url("/orders"), "k", "{}");
      Answer ran = client.post(releasing.url("/orders"), "k", "{}");
      assertEquals(503, stored.status());
      assertEquals("true", stored.replayed());
      assertEquals(1, storing.effectCount("k"), "the 5xx is the stored result");
      assertEquals(201, ran.status());
      assertEquals(2, releasing.effectCount("k"), "the 5xx released the key; the retry ran again");
    }
  }

  @Test
  void thrownHandlersAreNeverStoredEvenWhenServerErrorsAre() throws Exception {
    int[] calls = new int[1];
    EffectHandler throwsFirst = r -> {
      if (++calls[0] == 1) {
        throw new IllegalStateException("boom");
      }
      return Reply.json(201, "{}");
    };
    try (IdempotentServer server = IdempotentServer.builder().handler(throwsFirst).storeServerErrors(true).start()) {
      assertEquals(500, client.post(server.url("/orders"), "k", "{}").status());
      assertEquals(201, client.post(server.url("/orders"), "k", "{}").status());
      assertEquals(2, server.effectCount("k"));
    }
  }

  @Test
  void fingerprintOverCanonicalJsonOrRawBytes() throws Exception {
    try (IdempotentServer canonical = IdempotentServer.start();
        IdempotentServer raw = IdempotentServer.builder().fingerprintMode(FingerprintMode.RAW_BYTES).start()) {
      for (IdempotentServer s : new IdempotentServer[] {canonical, raw}) {
        client.post(s.url("/orders"), "k", "{\"a\":1,\"b\":2}");
      }
      Answer c = client.post(canonical.url("/orders"), "k", "{ \"b\": 2, \"a\": 1 }");
      Answer r = client.post(raw.url("/orders"), "k", "{ \"b\": 2, \"a\": 1 }");
      assertEquals("true", c.replayed(), "RFC 8785: the same payload");
      assertEquals(422, r.status(), "other bytes: another payload");
      assertEquals("true", client.post(raw.url("/orders"), "k", "{\"a\":1,\"b\":2}").replayed());
      assertEquals(1, canonical.effectCount("k"));
      assertEquals(1, raw.effectCount("k"));
    }
  }
}
