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
 * Regression test for a defect found by review, described as it was; fixed: only access_token (RFC 6750 section 2.2) leaves a form body's fingerprint.
 *
 * <p>Review finding on a76040a8 ("a refreshed access_token in a form body leaves the fingerprint too").
 *
 * <p>The commit's reason is RFC 6750 section 2.2, which allows exactly one credential in a
 * form-encoded body: {@code access_token}. But {@code RequestFingerprints.withoutCredentials} takes
 * every name of {@code SecretQueryParameters.NAMES} out of the form: {@code api_key}, {@code apikey},
 * {@code api-key} and all {@code x-amz-*}/{@code x-goog-*} names too. That list was chosen for the
 * query on the ground that those names "only ever authenticate the request itself"; in a form body
 * they very commonly are the operation's data: "connect your Mailchimp/Stripe/SendGrid account"
 * endpoints take the third-party {@code api_key} as a form field and store it.
 *
 * <p>Consequence: a client that reuses an idempotency key for another operation that differs only
 * in that field (connects another account, or corrects a mistyped key) is no longer refused 422
 * "key reused"; it is answered the first operation's stored 201 as a replay. The client believes its
 * new key was saved, the server still holds the old one, and the guard has silently hidden the very
 * client bug it exists to detect. Before a76040a8 this was refused, as it still is for a JSON body
 * with the same field.
 */
class FormApiKeyIsOperationDataTest {
  private final VirtualTime time = new VirtualTime();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore())
      .clock(time.clock()).scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest connect(String form) {
    return new GuardRequest("POST", "/integrations/mailchimp", null, "application/x-www-form-urlencoded",
        List.of("k-connect"), "alice", GuardRequest.BodyReader.of(form.getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aKeyReusedForAnotherThirdPartyApiKeyInAFormIsRefusedNotReplayed() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class,
        guard.admit(connect("list=newsletter&api_key=old-mailchimp-key-us1")));
    guard.complete(first.claim(), new CapturedResponse(201, Map.of(),
        "{\"connected\":\"old-mailchimp-key-us1\"}".getBytes(StandardCharsets.UTF_8)));

    Admission.Respond other = assertInstanceOf(Admission.Respond.class,
        guard.admit(connect("list=newsletter&api_key=new-mailchimp-key-us2")));

    assertEquals(Admission.Reason.KEY_REUSED, other.reason(),
        "a form whose api_key field (the operation's data, not the request's credential) differs was answered "
            + other.reason() + " " + other.response().status() + " "
            + new String(other.response().body(), StandardCharsets.UTF_8));
  }
}
