package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.support.InboxRows;
import dev.idem.webhooks.support.RecordingListener;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * Replays during a secret rotation, for a scheme that does not sign its event id (a
 * {@link GenericHmac} with an id header outside the signed content, and no timestamp): the
 * remembered signature is then the only thing that tells a replay under a new id from a new event.
 * While rotating the sender signs with both secrets and both are configured, so one signed content
 * has a valid MAC under each; a replay carrying the other one under a new id must still be refused.
 *
 * <p>Found by a review on 2026-12-04: the inbox remembered the MAC under the first secret that
 * matched only, so a captured delivery re-sent with one of its two signatures dropped and a new id
 * was accepted and processed a second time.
 */
class RotationReplayTest extends InboxOnVirtualClock {
  static final String NEW = "new-s3cret";
  static final String OLD = "old-s3cret";
  static final Instant T0 = Instant.parse("2026-12-04T09:00:00Z");
  static final GenericHmac UNSIGNED_ID = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha256=")
      .idHeader("X-Acme-Id").typeHeader("X-Acme-Type").build();

  RotationReplayTest() {
    super(T0);
  }

  final RecordingListener listener = new RecordingListener();

  /** A receiver on a newly opened embedded inbox in {@code dir}, with {@code secrets} in order. */
  WebhookReceiver receiver(GenericHmac scheme, String... secrets) {
    openInbox();
    WebhookSource.Builder b = WebhookSource.builder("acme", SignatureScheme.hmac(scheme)).clock(time.clock());
    for (String s : secrets) {
      b.secret(s);
    }
    return WebhookReceiver.builder(b.build(), inbox).listener(listener).build();
  }

  static String sign(String secret, String content) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    return "sha256=" + HexFormat.of().formatHex(mac.doFinal(content.getBytes(StandardCharsets.UTF_8)));
  }

  /** A delivery of {@code body} under {@code id}, carrying the signatures under {@code secrets}. */
  static WebhookResponse post(WebhookReceiver r, String id, String body, String... secrets) throws Exception {
    StringBuilder sigs = new StringBuilder();
    for (String s : secrets) {
      sigs.append(sigs.length() == 0 ? "" : " ").append(sign(s, body));
    }
    return r.handle("POST", Map.of("X-Acme-Signature", List.of(sigs.toString()), "X-Acme-Id", List.of(id),
        "X-Acme-Type", List.of("order.paid")), body.getBytes(StandardCharsets.UTF_8));
  }

  static final String BODY = "{\"order\":42,\"amount\":1299}";

  void assertRefusedAsReplay(WebhookResponse replay) throws Exception {
    assertEquals(200, replay.status());
    assertEquals("{\"status\":\"duplicate\",\"reason\":\"replay\"}", replay.body());
    assertEquals(List.of(RejectionReason.REPLAY), listener.rejections);
    assertEquals(1, InboxRows.count(dir), "the replay stored nothing");
    assertFalse(inbox.find("acme", "ev-2").isPresent());
    assertEquals(InboxState.PENDING, inbox.find("acme", "ev-1").orElseThrow().state());
  }

  @Test
  void aReplayKeepingOnlyTheOldSignatureUnderANewIdIsRefused() throws Exception {
    WebhookReceiver r = receiver(UNSIGNED_ID, NEW, OLD);
    assertEquals("{\"status\":\"accepted\"}", post(r, "ev-1", BODY, NEW, OLD).body());
    time.advance(Duration.ofMinutes(5));

    assertRefusedAsReplay(post(r, "ev-2", BODY, OLD));
  }

  @Test
  void aReplayKeepingOnlyTheNewSignatureOfADeliverySignedWithTheOldOneIsRefused() throws Exception {
    // The reverse order: the sender had not started signing with the new secret yet.
    WebhookReceiver r = receiver(UNSIGNED_ID, NEW, OLD);
    assertEquals("{\"status\":\"accepted\"}", post(r, "ev-1", BODY, OLD).body());
    time.advance(Duration.ofMinutes(5));

    assertRefusedAsReplay(post(r, "ev-2", BODY, NEW));
  }

  @Test
  void aReplayWithTheOtherSignatureIsRefusedWhicheverOrderTheSecretsWereAddedIn() throws Exception {
    WebhookReceiver r = receiver(UNSIGNED_ID, OLD, NEW);
    assertEquals("{\"status\":\"accepted\"}", post(r, "ev-1", BODY, NEW).body());

    assertRefusedAsReplay(post(r, "ev-2", BODY, OLD));
  }

  @Test
  void aReplayOfAnEventAcceptedBeforeTheRotationBeganIsStillRefused() throws Exception {
    // The inbox row holds what was remembered under the old secret alone, as inboxes written before
    // this fix, or before the new secret was added, hold it.
    WebhookReceiver r = receiver(UNSIGNED_ID, OLD);
    assertEquals("{\"status\":\"accepted\"}", post(r, "ev-1", BODY, OLD).body());
    r = receiver(UNSIGNED_ID, NEW, OLD);
    time.advance(Duration.ofMinutes(5));

    assertRefusedAsReplay(post(r, "ev-2", BODY, OLD));
    listener.rejections.clear();
    assertRefusedAsReplay(post(r, "ev-2", BODY, NEW, OLD));
  }

  @Test
  void aReplayUnderASignedTimestampButAnUnsignedIdIsRefusedInsideTheWindow() throws Exception {
    GenericHmac timed = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha256=").idHeader("X-Acme-Id")
        .timestampHeader("X-Acme-Time").typeHeader("X-Acme-Type").signedContent("{timestamp}.{body}").build();
    WebhookReceiver r = receiver(timed, NEW, OLD);
    String ts = Long.toString(T0.getEpochSecond());
    String content = ts + "." + BODY;
    byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
    String both = sign(NEW, content) + " " + sign(OLD, content);
    assertEquals(200, r.handle("POST", Map.of("X-Acme-Signature", List.of(both), "X-Acme-Id", List.of("ev-1"),
        "X-Acme-Time", List.of(ts)), body).status());
    time.advance(Duration.ofSeconds(30));

    assertRefusedAsReplay(r.handle("POST", Map.of("X-Acme-Signature", List.of(sign(OLD, content)),
        "X-Acme-Id", List.of("ev-2"), "X-Acme-Time", List.of(ts)), body));
  }

  @Test
  void aDifferentEventIsStillAcceptedUnderEitherSecretOrBoth() throws Exception {
    WebhookReceiver r = receiver(UNSIGNED_ID, NEW, OLD);
    assertEquals("{\"status\":\"accepted\"}", post(r, "ev-1", BODY, NEW, OLD).body());

    assertEquals("{\"status\":\"accepted\"}", post(r, "ev-2", "{\"order\":43,\"amount\":1299}", OLD).body());
    assertEquals("{\"status\":\"accepted\"}", post(r, "ev-3", "{\"order\":44,\"amount\":1299}", NEW).body());
    assertEquals("{\"status\":\"accepted\"}", post(r, "ev-4", "{\"order\":45,\"amount\":1299}", NEW, OLD).body());

    assertEquals(List.of(), listener.rejections);
    assertEquals(4, InboxRows.count(dir));
    assertTrue(inbox.find("acme", "ev-4").isPresent());
    // and a provider's retry of one of them, under its own id, is the usual duplicate
    assertEquals(200, post(r, "ev-2", "{\"order\":43,\"amount\":1299}", NEW, OLD).status());
    assertEquals(4, InboxRows.count(dir));
  }

  @Test
  void aGitHubReplayUnderANewDeliveryIdSignedWithTheOtherSecretIsRefused() throws Exception {
    // GitHub signs neither its delivery id nor a time, and sends one signature: a delivery signed
    // with the old secret, then the same content signed with the new one under another id.
    openInbox();
    WebhookReceiver r = WebhookReceiver.builder(WebhookSource.builder("acme", SignatureScheme.github())
        .secret(NEW).secret(OLD).clock(time.clock()).build(), inbox).listener(listener).build();
    byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
    assertEquals(200, ReceiverTest.post(r, WebhookSigner.GITHUB.sign(OLD, "ev-1", "order.paid", T0, body)).status());

    assertRefusedAsReplay(ReceiverTest.post(r, WebhookSigner.GITHUB.sign(NEW, "ev-2", "order.paid", T0, body)));
  }

  @Test
  void onlyAnUnsignedIdWithSeveralSecretsCostsTheOtherSecretsMacsAndTheStoredOneIsTheSameWhicheverMatched()
      throws Exception {
    Map<String, List<String>> oldOnly = Map.of("X-Acme-Signature", List.of(sign(OLD, BODY)), "X-Acme-Id",
        List.of("ev-1"));
    Map<String, List<String>> newOnly = Map.of("X-Acme-Signature", List.of(sign(NEW, BODY)), "X-Acme-Id",
        List.of("ev-1"));
    byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
    WebhookSource rotating = WebhookSource.builder("acme", SignatureScheme.hmac(UNSIGNED_ID)).secret(NEW).secret(OLD)
        .build();
    VerifiedWebhook viaOld = rotating.verify(oldOnly, body);
    VerifiedWebhook viaNew = rotating.verify(newOnly, body);
    assertArrayEquals(viaNew.signatureDigest(), viaOld.signatureDigest(),
        "the same content is stored as the same digest, so the unique index refuses a concurrent replay too");
    assertEquals(1, viaOld.otherSignatureDigests().size());
    assertArrayEquals(viaOld.otherSignatureDigests().get(0), viaNew.otherSignatureDigests().get(0));

    // One secret: what it always was, and nothing more to compute or look for.
    WebhookSource single = WebhookSource.builder("acme", SignatureScheme.hmac(UNSIGNED_ID)).secret(OLD).build();
    VerifiedWebhook alone = single.verify(oldOnly, body);
    assertEquals(List.of(), alone.otherSignatureDigests());
    assertArrayEquals(viaOld.otherSignatureDigests().get(0), alone.signatureDigest(),
        "what an inbox written under the old secret alone holds is what a rotating source looks for");

    // A signed id: a replay cannot change it and is refused by it, so the rotation costs nothing more.
    GenericHmac signedId = GenericHmac.builder("X-Acme-Signature").signaturePrefix("sha256=").idHeader("X-Acme-Id")
        .signedContent("{id}.{body}").build();
    VerifiedWebhook signed = WebhookSource.builder("acme", SignatureScheme.hmac(signedId)).secret(NEW).secret(OLD)
        .build().verify(Map.of("X-Acme-Signature", List.of(sign(OLD, "ev-1." + BODY)), "X-Acme-Id", List.of("ev-1")),
            body);
    assertEquals(List.of(), signed.otherSignatureDigests());
  }
}
