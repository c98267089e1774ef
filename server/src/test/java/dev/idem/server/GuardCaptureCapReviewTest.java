package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.spi.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review (guard23): {@code maxCapturedBody} is documented as "the longest response body stored for
 * replay; a longer one is sent but not stored" (Builder javadoc, docs/server.md "Response capture").
 * Only the two bundled adapters enforce it (their BoundedCapture passes a null body); an adapter of
 * another framework that calls {@link IdempotencyGuard#complete} with the body it has, as
 * docs/server.md tells "other frameworks" to, and the test kit's reference server (which does
 * exactly that), store a body of any size, and replay it in full.
 */
class GuardCaptureCapReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock())
      .scheduler(time.scheduler()).purgeInterval(null).maxCapturedBody(16).build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest request() {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of("k-cap"), "alice",
        GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aBodyOverTheCapPassedToCompleteIsNotStoredAndItsReplayIsMarkedOmitted() throws Exception {
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(request()));
    byte[] big = new byte[1000];
    Arrays.fill(big, (byte) 'x');
    assertEquals(CompletionResult.STORED, guard.complete(p.claim(),
        new CapturedResponse(201, Map.of("Content-Type", List.of("text/plain")), big)));

    StoredResponse stored = store.find(new RecordId("alice", "POST /orders", "k-cap")).orElseThrow()
        .response().orElseThrow();
    GuardResponse replay = assertInstanceOf(Admission.Respond.class, guard.admit(request())).response();

    assertEquals(0, stored.body().length,
        "maxCapturedBody(16) stored a body of " + stored.body().length + " bytes: " + stored);
    assertEquals("omitted", replay.header(IdempotencyGuard.REPLAY_BODY_HEADER),
        "the replay of an over-cap body is marked omitted; it carried " + replay.body().length + " bytes");
  }
}
