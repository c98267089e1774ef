package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A credential path parameter (the client's rule: {@code jsessionid}, {@code sig}, {@code key},
 * any case) is no part of a guarded request's identity, in any adapter: removed from every
 * segment, whatever its value, so that a retry whose session id changed is the same operation and
 * the store never holds it. Every other part of the raw path stays as written, so records stored
 * before keep matching.
 */
class SecretPathParameterIdentityTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock())
      .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest post(String path, String key) {
    return new GuardRequest("POST", path, null, "application/json", List.of(key), "alice",
        GuardRequest.BodyReader.of("{\"item\":\"book\"}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void credentialPathParametersAreRemovedFromEverySegmentInAnyCase() {
    assertEquals("/orders", post("/orders;jsessionid=node0abc", "k").path());
    assertEquals("/a/b;v=1", post("/a;JSESSIONID=s1/b;v=1;JSessionId=s2", "k").path());
    assertEquals("/files/x;author=tolkien", post("/files;sig=s3cr3t;key=k1/x;author=tolkien", "k").path());
    // Named with escapes: the client's rule judges the decoded name.
    assertEquals("/orders", post("/orders;%6Asessionid=abc", "k").path());
    // Without a value, too; a bare segment parameter of another name stays.
    assertEquals("/orders;v", post("/orders;jsessionid;v", "k").path());
    assertEquals("/", post("/;jsessionid=abc", "k").path());
  }

  @Test
  void otherPathsAreKeptExactlyAsWritten() {
    for (String path : List.of("/orders", "/pay%6Dents/%E2%82%AC", "/books;author=tolkien;session=2",
        "/a;jsessionidx=1/b;xkey=2", "/a%3Bjsessionid=1", "/odd;=v;%zz=1")) {
      assertSame(path, post(path, "k").path(), path);
    }
  }

  @Test
  void aRetryUnderANewSessionIdIsReplayedAndTheStoredRouteHoldsNoSessionId() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class,
        guard.admit(post("/orders;jsessionid=node0aaaa", "k-1")));
    guard.complete(first.claim(), new CapturedResponse(201, Map.of(), "{\"order\":1}".getBytes(StandardCharsets.UTF_8)));

    Admission retry = guard.admit(post("/orders;jsessionid=node0bbbb", "k-1"));

    Admission.Respond replay = assertInstanceOf(Admission.Respond.class, retry, "the retry is the same operation");
    assertEquals(201, replay.response().status());
    List<RecordSummary> records = guard.records(RecordQuery.all()).records();
    assertEquals(1, records.size());
    assertEquals("POST /orders", records.get(0).id().route());
  }

  @Test
  void aRoutePolicyAppliesWhateverSessionIdThePathCarries() throws Exception {
    try (IdempotencyGuard g = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).clock(time.clock())
        .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null)
        .route("PUT", "/profile", new RoutePolicy(true, java.time.Duration.ofHours(1))).build()) {
      GuardRequest unkeyed = new GuardRequest("PUT", "/profile;jsessionid=abc", null, null, List.of(), "alice",
          GuardRequest.BodyReader.of(new byte[0]));
      Admission a = g.admit(unkeyed);
      assertInstanceOf(Admission.Respond.class, a, "the route's policy (key required) applies");
    }
  }
}
