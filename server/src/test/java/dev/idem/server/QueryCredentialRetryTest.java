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
 * Regression test for a defect found by review, described as it was; fixed: credential query parameters are out of the fingerprint ({@code SecretQueryParameters}).
 *
 * <p>The guard takes credential path parameters ({@code ;jsessionid=}, {@code ;sig=}) out of a
 * request's identity so that "a retry whose session id changed is the same operation"
 * ({@code GuardRequest}, {@code SecretPathParameters}). A credential in the query, by the client's
 * own rule ({@code RequestSnapshot.isSecretQueryParameterByDefault}: {@code access_token},
 * {@code api_key}, {@code sig}...), stays in the fingerprint as written. A client that
 * authenticates with {@code ?access_token=} (RFC 6750 section 2.3) and refreshes its token between
 * a timed-out attempt and its retry sends the same operation under the same key, and is refused
 * 422 "key reused with a different request", which Idem's client (and the IETF draft) takes as a
 * permanent failure, although the first attempt's effect exists: the client is told FAILED for an
 * operation that happened.
 */
class QueryCredentialRetryTest {
  private final VirtualTime time = new VirtualTime();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).clock(time.clock())
      .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest post(String rawQuery) {
    return new GuardRequest("POST", "/orders", rawQuery, "application/json", List.of("k-1"), "alice",
        GuardRequest.BodyReader.of("{\"item\":\"book\"}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aRetryWhoseAccessTokenWasRefreshedIsTheSameOperation() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post("access_token=tok-before")));
    guard.complete(first.claim(), new CapturedResponse(201, Map.of(), "{\"order\":1}".getBytes(StandardCharsets.UTF_8)));

    Admission retry = guard.admit(post("access_token=tok-after-refresh"));

    Admission.Respond answer = assertInstanceOf(Admission.Respond.class, retry);
    assertEquals(Admission.Reason.REPLAY, answer.reason(),
        "the same order under the same key, only its credential refreshed, was refused as "
            + answer.reason() + " " + answer.response().status());
  }
}
