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
 * Regression test for a defect found by review, described as it was; fixed: every parameter of a signed URL's signature is left out of the fingerprint.
 *
 * <p>Review finding on 9a8e9683: {@code SecretQueryParameters.NAMES} lists {@code X-Amz-Signature},
 * {@code X-Amz-Credential}, {@code X-Amz-Security-Token}, {@code X-Goog-Signature} and
 * {@code X-Goog-Credential} as "signed URLs' signature and credential", and docs/server.md says that
 * with them left out "a retry whose token was refreshed between a timed-out attempt and the retry
 * is replayed, not refused 422". But a signed URL is re-signed with a new {@code X-Amz-Date}
 * ({@code X-Goog-Date}), second-resolution and part of every SigV4 (V4 signing) query, and that
 * parameter stays in the fingerprint.
 *
 * <p>Consequence: for the signed-URL case the names were added for, a retry whose URL was re-signed
 * (a fresh signature for the same operation) is still refused 422 "key reused", which clients take
 * as a permanent failure although the first attempt's effect exists: leaving out the signature and
 * credential alone never makes a re-signed retry the same operation.
 */
class SignedUrlRefreshTest {
  private static final byte[] BODY = "{\"item\":\"book\"}".getBytes(StandardCharsets.UTF_8);
  private final VirtualTime time = new VirtualTime();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).clock(time.clock())
      .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest post(String date, String signature) {
    String query = "X-Amz-Algorithm=AWS4-HMAC-SHA256"
        + "&X-Amz-Credential=AKIDEXAMPLE%2F" + date.substring(0, 8) + "%2Fus-east-1%2Fexecute-api%2Faws4_request"
        + "&X-Amz-Date=" + date + "&X-Amz-Expires=300&X-Amz-SignedHeaders=host&X-Amz-Signature=" + signature;
    return new GuardRequest("POST", "/orders", query, "application/json", List.of("k-1"), "alice",
        GuardRequest.BodyReader.of(BODY));
  }

  @Test
  void aRetryWhoseSignedUrlWasReSignedIsTheSameOperation() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class,
        guard.admit(post("20261207T200000Z", "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7")));
    guard.complete(first.claim(), new CapturedResponse(201, Map.of(), "{\"order\":1}".getBytes(StandardCharsets.UTF_8)));

    // The attempt timed out; the client re-signs the same request (new date, new signature) and retries.
    Admission.Respond retry = assertInstanceOf(Admission.Respond.class,
        guard.admit(post("20261207T200500Z", "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")));

    assertEquals(Admission.Reason.REPLAY, retry.reason(), "the same operation under the same key, its signed URL"
        + " only re-signed, was refused as " + retry.reason() + " " + retry.response().status()
        + ": X-Amz-Date stays in the fingerprint");
  }
}
