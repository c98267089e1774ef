package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A query parameter is part of a request's fingerprint, whatever its name: a key reused for
 * {@code ?author=bob} after {@code ?author=alice} is refused 422, not replayed the other request's
 * result. Regression test: a change of this session (reverted) left every name the client's broad
 * credential rule matches ({@code author}, {@code session}...) out of the fingerprint.
 */
class QueryParameterFingerprintTest {
  private final VirtualTime time = new VirtualTime();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).clock(time.clock())
      .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest post(String rawQuery) {
    return new GuardRequest("POST", "/books", rawQuery, "application/json", List.of("k-1"), "alice",
        GuardRequest.BodyReader.of("{\"title\":\"Notes\"}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aKeyReusedForAnotherAuthorIsRefusedNotReplayed() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post("author=alice")));
    guard.complete(first.claim(), new CapturedResponse(201, Map.of(), "{\"book\":1}".getBytes(StandardCharsets.UTF_8)));

    Admission reuse = guard.admit(post("author=bob"));

    Admission.Respond answer = assertInstanceOf(Admission.Respond.class, reuse);
    assertEquals(Admission.Reason.KEY_REUSED, answer.reason(),
        "POST /books?author=bob under the key of POST /books?author=alice was answered " + answer.reason() + " "
            + answer.response().status() + ": 'author' is treated as a credential and left out of the fingerprint");
  }

  @Test
  void aKeyReusedForAnotherSessionNumberIsRefusedNotReplayed() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post("session=2")));
    guard.complete(first.claim(), new CapturedResponse(201, Map.of(), "{\"seat\":1}".getBytes(StandardCharsets.UTF_8)));

    Admission reuse = guard.admit(post("session=3"));

    Admission.Respond answer = assertInstanceOf(Admission.Respond.class, reuse);
    assertEquals(Admission.Reason.KEY_REUSED, answer.reason(),
        "a booking for session 3 under the key of a booking for session 2 was answered " + answer.reason());
  }
}
