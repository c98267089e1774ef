package dev.idem.webhooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.testkit.webhook.WebhookDelivery;
import dev.idem.testkit.webhook.WebhookSigner;
import dev.idem.webhooks.support.InboxRows;
import dev.idem.webhooks.support.RecordingListener;
import java.io.ByteArrayInputStream;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The receiving endpoint against the embedded inbox: what is accepted once, what is a duplicate,
 * and what is refused with which reason, checked against the rows actually in the inbox file.
 */
class ReceiverTest extends InboxOnVirtualClock {
  static final String SECRET = "whsec_aWRlbS10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5YWJjZGVm";
  static final String OLD_SECRET = "whsec_aWRlbS1yb3RhdGVkLXNlY3JldC1mZWRjYmE5ODc2NTQzMjEw";
  static final Instant T0 = Instant.parse("2026-12-01T12:00:00Z");

  final java.time.Clock clock = time.clock();
  final RecordingListener listener = new RecordingListener();

  WebhookReceiver receiver(SignatureScheme scheme, String... secrets) {
    openInbox();
    WebhookSource.Builder b = WebhookSource.builder("acme", scheme).clock(clock).maxBodyBytes(1024);
    for (String s : secrets) {
      b.secret(s);
    }
    return WebhookReceiver.builder(b.build(), inbox).listener(listener).build();
  }

  static WebhookResponse post(WebhookReceiver r, WebhookDelivery d) {
    Map<String, List<String>> h = new TreeMap<>();
    d.headers().forEach((k, v) -> h.put(k, List.of(v)));
    return r.handle("POST", h, d.body());
  }

  static byte[] body(String id, String marker) {
    return WebhookSigner.jsonEvent(id, "payment.succeeded", "{\"amount\":1299,\"note\":\"" + marker + "\"}");
  }

  @Test
  void aValidDeliveryIsStoredOnceAndARedeliveryWithANewSignatureIsADuplicate() throws Exception {
    WebhookReceiver r = receiver(SignatureScheme.standardWebhooks(), SECRET);
    byte[] body = body("evt_1", "first");
    WebhookResponse first = post(r, WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1", "payment.succeeded", T0, body));
    time.advance(Duration.ofSeconds(30));  // the provider's retry is signed again, later
    WebhookResponse again = post(r, WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1", "payment.succeeded",
        clock.instant(), body));

    assertEquals(200, first.status(), first.body());
    assertEquals("{\"status\":\"accepted\"}", first.body());
    assertEquals(200, again.status());
    assertEquals("{\"status\":\"duplicate\"}", again.body());
    assertEquals(1, InboxRows.count(dir));
    InboxEntry e = inbox.find("acme", "msg_1").orElseThrow();
    assertEquals(InboxState.PENDING, e.state());
    assertEquals("payment.succeeded", e.eventType(), "the type is read from the verified body");
    assertEquals(T0, e.receivedAt());
    assertEquals(List.of("accepted payment.succeeded", "duplicate"), listener.events);
  }

  @Test
  void anExactReplayInsideTheWindowIsAnsweredAsADuplicateCountedAsReplayAndNotStoredAgain() throws Exception {
    WebhookReceiver r = receiver(SignatureScheme.standardWebhooks(), SECRET);
    WebhookDelivery d = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1", "payment.succeeded", T0, body("e", "x"));
    post(r, d);
    time.advance(Duration.ofSeconds(60));
    WebhookResponse replay = post(r, d);

    assertEquals(200, replay.status());
    assertTrue(replay.body().contains("replay"), replay.body());
    assertEquals(List.of(RejectionReason.REPLAY), listener.rejections);
    assertEquals(1, InboxRows.count(dir));
  }

  @Test
  void timestampedSchemesRememberTheirSignaturesInSigningOrder() throws Exception {
    // The signature index is kept in the order of the signed time, so that each accept adds to its
    // newest page rather than to a random one (issue 28, W1); ids chosen so that no other order agrees.
    WebhookReceiver r = receiver(SignatureScheme.standardWebhooks(), SECRET);
    List<String> ids = List.of("msg_c", "msg_a", "msg_e", "msg_b", "msg_d", "msg_f");
    for (String id : ids) {
      time.advance(Duration.ofSeconds(1));
      assertEquals(200, post(r, WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, id, "payment.succeeded",
          clock.instant(), body(id, id))).status());
    }
    assertEquals(ids, InboxRows.eventIdsBySignature(dir));

    inbox.close();
    r = receiver(SignatureScheme.stripe(), "whsec_stripe");
    List<String> stripeIds = List.of("evt_c", "evt_a", "evt_e", "evt_b", "evt_d", "evt_f");
    for (String id : stripeIds) {
      time.advance(Duration.ofSeconds(1));
      assertEquals(200, post(r, WebhookSigner.STRIPE.sign("whsec_stripe", id, "payment.succeeded", clock.instant(),
          body(id, id))).status());
    }
    List<String> all = new java.util.ArrayList<>(ids);
    all.addAll(stripeIds);
    assertEquals(all, InboxRows.eventIdsBySignature(dir));
  }

  @Test
  void aReplayOfAnEventRememberedBeforeSignaturesWereOrderedIsStillNotStoredAgain() throws Exception {
    WebhookReceiver r = receiver(SignatureScheme.standardWebhooks(), SECRET);
    WebhookDelivery d = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1", "payment.succeeded", T0, body("e", "x"));
    assertEquals(200, post(r, d).status());
    inbox.close();
    // As an inbox written before the timestamp prefix holds it: the bare SHA-256 of the signature.
    assertEquals(1, InboxRows.update(dir, "UPDATE idem_webhook_inbox SET signature_digest = substr(signature_digest, 9)"
        + " WHERE length(signature_digest) = 40"));
    r = receiver(SignatureScheme.standardWebhooks(), SECRET);
    time.advance(Duration.ofSeconds(60));

    WebhookResponse replay = post(r, d);

    assertEquals(200, replay.status());
    assertTrue(replay.body().contains("duplicate"), replay.body());
    assertEquals(1, InboxRows.count(dir));
  }

  @Test
  void aReplayUnderANewUnsignedIdIsCaughtByTheRememberedSignature() throws Exception {
    // The id header is not signed, and the provider's time neither (so no timestamp header: GenericHmac
    // refuses one its template does not sign): a replay may carry another id and time, so neither is
    // part of what is remembered of the signature.
    GenericHmac unsignedIdAndTime = GenericHmac.builder("X-Acme-Signature").idHeader("X-Acme-Id")
        .signedContent("{body}").build();
    WebhookReceiver r = receiver(SignatureScheme.hmac(unsignedIdAndTime), "s3cret");
    byte[] body = "{\"x\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
    mac.init(new javax.crypto.spec.SecretKeySpec("s3cret".getBytes(java.nio.charset.StandardCharsets.UTF_8),
        "HmacSHA256"));
    String sig = java.util.HexFormat.of().formatHex(mac.doFinal(body));
    assertEquals(200, r.handle("POST", Map.of("X-Acme-Signature", List.of(sig), "X-Acme-Id", List.of("ev-1"),
        "X-Acme-Time", List.of(Long.toString(T0.getEpochSecond()))), body).status());
    time.advance(Duration.ofSeconds(60));

    WebhookResponse replay = r.handle("POST", Map.of("X-Acme-Signature", List.of(sig), "X-Acme-Id", List.of("ev-2"),
        "X-Acme-Time", List.of(Long.toString(clock.instant().getEpochSecond()))), body);

    assertEquals(200, replay.status());
    assertEquals(List.of(RejectionReason.REPLAY), listener.rejections);
    assertEquals(1, InboxRows.count(dir));
    assertFalse(inbox.find("acme", "ev-2").isPresent());
  }

  @Test
  void aGitHubReplayUnderANewDeliveryIdIsCaughtByTheRememberedSignature() throws Exception {
    WebhookReceiver r = receiver(SignatureScheme.github(), "gh-secret");
    byte[] body = "{\"action\":\"opened\",\"number\":42}".getBytes();
    WebhookDelivery d = WebhookSigner.GITHUB.sign("gh-secret", "delivery-1", "pull_request", T0, body);
    assertEquals(200, post(r, d).status());
    // GitHub signs neither the delivery id nor a time: an attacker can re-send with a fresh id.
    WebhookResponse replay = post(r, d.withHeader("X-GitHub-Delivery", "delivery-2"));

    assertEquals(200, replay.status());
    assertEquals(List.of(RejectionReason.REPLAY), listener.rejections);
    assertEquals(1, InboxRows.count(dir));
    assertFalse(inbox.find("acme", "delivery-2").isPresent());
    assertEquals("pull_request", inbox.find("acme", "delivery-1").orElseThrow().eventType());
  }

  @Test
  void staleTimestampIsRejectedAsTimestampAndNothingIsStored() throws Exception {
    WebhookReceiver r = receiver(SignatureScheme.standardWebhooks(), SECRET);
    WebhookDelivery old = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_old", "payment.succeeded",
        T0.minusSeconds(301), body("e", "stale-marker"));
    WebhookResponse resp = post(r, old);

    assertEquals(400, resp.status());
    assertEquals("{\"status\":\"rejected\",\"reason\":\"timestamp\"}", resp.body());
    assertEquals(List.of(RejectionReason.TIMESTAMP), listener.rejections);
    assertEquals(0, InboxRows.count(dir));
  }

  @Test
  void aReplayOfAnAcceptedDeliveryAfterTheWindowIsATimestampRejection() throws Exception {
    WebhookReceiver r = receiver(SignatureScheme.stripe(), "whsec_idemStripeTest");
    WebhookDelivery d = WebhookSigner.STRIPE.sign("whsec_idemStripeTest", "evt_9", "charge.succeeded", T0,
        body("evt_9", "m"));
    assertEquals(200, post(r, d).status());
    time.advance(Duration.ofSeconds(301));
    WebhookResponse late = post(r, d);

    assertEquals(400, late.status());
    assertEquals(List.of(RejectionReason.TIMESTAMP), listener.rejections);
    assertEquals(1, InboxRows.count(dir));
  }

  @Test
  void aTamperedByteIsRejectedAsSignatureAndItsBodyIsNotStored() throws Exception {
    WebhookReceiver r = receiver(SignatureScheme.stripe(), "whsec_idemStripeTest");
    WebhookDelivery d = WebhookSigner.STRIPE.sign("whsec_idemStripeTest", "evt_1", "charge.succeeded", T0,
        body("evt_1", "tamper-marker"));
    WebhookResponse resp = post(r, d.tampered());

    assertEquals(401, resp.status());
    assertEquals(List.of(RejectionReason.SIGNATURE), listener.rejections);
    assertEquals(0, InboxRows.count(dir));
    assertEquals(0, InboxRows.bodiesContaining(dir, "tamper-marker"));
  }

  @Test
  void rotationAcceptsBothSecretsAndAStaleSecretIsRejectedOnceRemoved() throws Exception {
    WebhookReceiver rotating = receiver(SignatureScheme.standardWebhooks(), SECRET, OLD_SECRET);
    assertEquals(200, post(rotating, WebhookSigner.STANDARD_WEBHOOKS.sign(OLD_SECRET, "msg_a", "t", T0,
        body("a", "a"))).status());
    assertEquals(200, post(rotating, WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_b", "t", T0,
        body("b", "b"))).status());
    inbox.close();

    WebhookReceiver rotated = receiver(SignatureScheme.standardWebhooks(), SECRET);
    WebhookResponse stale = post(rotated, WebhookSigner.STANDARD_WEBHOOKS.sign(OLD_SECRET, "msg_c", "t", T0,
        body("c", "stale-secret-marker")));

    assertEquals(401, stale.status());
    assertEquals(List.of(RejectionReason.SIGNATURE), listener.rejections);
    assertEquals(2, InboxRows.count(dir));
    assertEquals(0, InboxRows.bodiesContaining(dir, "stale-secret-marker"));
  }

  @Test
  void aBodyOverTheCapIsRejectedAsTooLargeWithoutReadingItAllAndNothingIsStored() throws Exception {
    WebhookReceiver r = receiver(SignatureScheme.standardWebhooks(), SECRET);
    WebhookDelivery big = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_big", "t", T0,
        body("big", "x".repeat(1100)));
    assertEquals(413, post(r, big).status());

    Map<String, List<String>> h = new TreeMap<>();
    big.headers().forEach((k, v) -> h.put(k, List.of(v)));
    ByteArrayInputStream stream = new ByteArrayInputStream(big.body());
    assertEquals(413, r.handle("POST", h, stream).status());
    assertEquals(big.body().length - 1025, stream.available(), "read the cap plus one byte, no more");

    h.put("Content-Length", List.of(Integer.toString(big.body().length)));
    ByteArrayInputStream declared = new ByteArrayInputStream(big.body());
    assertEquals(413, r.handle("POST", h, declared).status());
    assertEquals(big.body().length, declared.available(), "refused by Content-Length before reading");

    assertEquals(List.of(RejectionReason.TOO_LARGE, RejectionReason.TOO_LARGE, RejectionReason.TOO_LARGE),
        listener.rejections);
    assertEquals(0, InboxRows.count(dir));
  }

  /**
   * A declared Content-Length sizes the read, but the stream decides what the body is: a stream
   * holding more than it declared is read on to the cap (and refused past it), one holding less
   * gives what it holds; the signature is checked over exactly those bytes.
   */
  @Test
  void aContentLengthThatDisagreesWithTheStreamNeitherCutsTheBodyNorLiftsTheCap() throws Exception {
    WebhookReceiver r = receiver(SignatureScheme.standardWebhooks(), SECRET);
    byte[] longer = body("evt_l", "declared-shorter");
    WebhookDelivery d1 = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_l", "t", T0, longer);
    assertEquals(200, r.handle("POST", withLength(d1, 10), new ByteArrayInputStream(longer)).status());
    byte[] shorter = body("evt_s", "declared-longer");
    WebhookDelivery d2 = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_s", "t", T0, shorter);
    assertEquals(200, r.handle("POST", withLength(d2, shorter.length + 50), new ByteArrayInputStream(shorter))
        .status());
    assertEquals(1, InboxRows.bodiesContaining(dir, "declared-shorter"), "the whole body, as signed");
    assertEquals(1, InboxRows.bodiesContaining(dir, "declared-longer"));

    WebhookDelivery big = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_big", "t", T0,
        body("big", "x".repeat(1100)));
    ByteArrayInputStream stream = new ByteArrayInputStream(big.body());
    assertEquals(413, r.handle("POST", withLength(big, 10), stream).status());
    assertEquals(big.body().length - 1025, stream.available(), "read the cap plus one byte, no more");
    assertEquals(2, InboxRows.count(dir));
  }

  static Map<String, List<String>> withLength(WebhookDelivery d, int length) {
    Map<String, List<String>> h = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    d.headers().forEach((k, v) -> h.put(k, List.of(v)));
    h.put("Content-Length", List.of(Integer.toString(length)));
    return h;
  }

  @Test
  void missingHeadersAreRejectedAsHeaderAndOtherMethodsAre405() throws Exception {
    WebhookReceiver r = receiver(SignatureScheme.standardWebhooks(), SECRET);
    WebhookDelivery d = WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1", "t", T0, body("e", "m"));
    WebhookResponse noId = post(r, d.withHeader("webhook-id", ""));
    WebhookResponse get = r.handle("GET", Map.of(), new byte[0]);

    assertEquals(400, noId.status());
    assertEquals(List.of(RejectionReason.HEADER), listener.rejections);
    assertEquals(405, get.status());
    assertEquals("POST", get.headers().get("Allow"));
    assertEquals(0, InboxRows.count(dir));
  }

  @Test
  void aClosedInboxAnswers503SoThatTheSenderRetries() {
    WebhookReceiver r = receiver(SignatureScheme.standardWebhooks(), SECRET);
    inbox.close();
    WebhookResponse resp = post(r, WebhookSigner.STANDARD_WEBHOOKS.sign(SECRET, "msg_1", "t", T0, body("e", "m")));
    assertEquals(503, resp.status());
    assertEquals("5", resp.headers().get("Retry-After"));
  }

  /** The inbox's failures name the inbox: its user never reads of a "journal" it does not have. */
  @Test
  void aClosedInboxSaysSoInItsOwnName() {
    receiver(SignatureScheme.standardWebhooks(), SECRET);
    inbox.close();
    WebhookInboxException e = org.junit.jupiter.api.Assertions.assertThrows(WebhookInboxException.class,
        () -> inbox.counts());
    assertTrue(e.getMessage().contains("webhook inbox " + dir.toAbsolutePath().normalize()) && e.getMessage()
        .contains("is closed") && !e.getMessage().contains("journal"), e.getMessage());
  }

  @Test
  void aSecondProcessCannotOpenTheSameEmbeddedInbox() {
    receiver(SignatureScheme.standardWebhooks(), SECRET);
    WebhookInboxException e = org.junit.jupiter.api.Assertions.assertThrows(WebhookInboxException.class,
        () -> WebhookInbox.sqlite(dir).open());
    // In this JVM the message says so; from another process, "open in another process".
    assertTrue(e.getMessage().contains("already open in this JVM"), e.getMessage());
  }
}
