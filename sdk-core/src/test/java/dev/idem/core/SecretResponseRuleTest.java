package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.Reconciliation;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The executor's secret rule applies to the response it journals as it does to the request: a
 * credential a server answers with (OpenStack Keystone's {@code X-Subject-Token}, a login's
 * {@code X-Auth-Token}, an echo of a header the app named) and the credential-named query
 * parameters of a stored {@code Location} stay out of the journal, while the caller still gets the
 * response whole.
 */
class SecretResponseRuleTest {
  private static final String SIGNED = "https://bucket.example.test/export-1.csv?part=1"
      + "&X-Amz-Credential=AKIAplanted&X-Amz-Signature=planted-sig&access_token=planted-access";
  private static final String SIGNED_REDACTED = "https://bucket.example.test/export-1.csv?part=1"
      + "&X-Amz-Credential=redacted&X-Amz-Signature=redacted&access_token=redacted";

  private final Harness h = new Harness(Harness.POLICY, b -> b.circuitBreaker(CircuitBreakerSettings.disabled())
      .secretHeaders(Set.of("X-Merchant-Pin")).allowHeaders(Set.of("X-Session-Locale")));

  @ParameterizedTest
  @EnumSource(Harness.Driver.class)
  void responseHeadersTheRuleNamesStayOutOfTheJournalButReachTheCaller(Harness.Driver driver) throws Exception {
    Operation op = Operation.builder("issue-token", Requests.order("{}")).build();
    ScriptedTransport t = h.transport(op).then(status(201, Map.of("X-Subject-Token", "planted-subject",
        "X-Auth-Token", "planted-auth", "X-Merchant-Pin", "planted-pin", "X-Session-Locale", "fr",
        "Content-Type", "application/json")));

    Outcome out = driver.run(h, op, t);

    assertEquals("planted-subject", out.response().header("X-Subject-Token").orElseThrow(), "the caller's copy");
    assertEquals("planted-pin", out.response().header("X-Merchant-Pin").orElseThrow());
    assertEquals(Set.of("content-type", "x-session-locale"), h.record(op).response().headers().keySet());
    // The documented consequence: the outcome read back from the journal lacks them.
    Outcome again = driver.run(h, op, t);
    assertTrue(again.fromJournal());
    assertFalse(again.response().header("X-Subject-Token").isPresent());
    assertEquals(1, t.count());
  }

  @Test
  void aFailedOperationsStoredResponseIsFilteredToo() throws Exception {
    Operation op = Operation.builder("login", Requests.order("{}")).build();
    ScriptedTransport t = h.transport(op).then(status(400, Map.of("X-Auth-Token", "planted-auth",
        "Location", SIGNED)));

    OperationFailedException e = assertThrows(OperationFailedException.class, () -> h.executor.execute(op, t));

    assertEquals("planted-auth", e.lastResponse().orElseThrow().header("x-auth-token").orElseThrow());
    assertEquals(SIGNED, e.lastResponse().orElseThrow().header("location").orElseThrow());
    OperationRecord r = h.record(op);
    assertEquals(OperationState.FAILED, r.state());
    assertEquals(Set.of("location"), r.response().headers().keySet());
    assertEquals(List.of(SIGNED_REDACTED), r.response().headers().get("location"));
  }

  @Test
  void aReconciliationsProofIsFilteredBeforeItIsJournaled() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{}")).build();
    ScriptedTransport t = h.transport(op).otherwise(ScriptedTransport.fail(new SocketTimeoutException("read")));
    assertThrows(OperationUncertainException.class, () -> h.executor.execute(op, t));
    ResponseSnapshot proof = ScriptedTransport.response(200, Map.of("X-Auth-Token", "planted-auth",
        "Content-Location", SIGNED), "{}");

    assertEquals(1, h.executor.reconcileUncertain(record -> Reconciliation.succeeded(proof, "found")));

    OperationRecord r = h.record(op);
    assertEquals(OperationState.SUCCEEDED, r.state());
    assertEquals(Map.of("content-location", List.of(SIGNED_REDACTED)), r.response().headers());
  }

  @ParameterizedTest
  @EnumSource(Harness.Driver.class)
  void aStoredLocationKeepsItsUrlWithTheCredentialValuesRedacted(Harness.Driver driver) throws Exception {
    Harness allowing = new Harness(Harness.POLICY, b -> b.allowQueryParameters(Set.of("X-Amz-Credential")));
    Operation op = Operation.builder("create-export", Requests.order("{}")).build();
    String location = "https://user:planted-pw@bucket.example.test/e.csv?X-Amz-Credential=AKIAkept"
        + "&X-Amz-Signature=planted-sig#access_token=planted-fragment&state=s1";
    ScriptedTransport t = allowing.transport(op).then(status(201, Map.of("Location", location,
        "Content-Location", "/exports/1?page=2")));

    Outcome out = driver.run(allowing, op, t);

    assertEquals(location, out.response().header("Location").orElseThrow(), "the caller's copy");
    Map<String, List<String>> stored = allowing.record(op).response().headers();
    assertEquals(List.of("https://redacted@bucket.example.test/e.csv?X-Amz-Credential=AKIAkept"
        + "&X-Amz-Signature=redacted#redacted"), stored.get("location"), "the fragment whole, see SecretFilterResponseTest");
    assertEquals(List.of("/exports/1?page=2"), stored.get("content-location"), "nothing to redact");
  }

  /**
   * A Link or Refresh carries URLs as Location does: a next-page link with a token in it, a
   * pre-signed download link, a refresh to a URL with a token. They were journaled in clear.
   */
  @ParameterizedTest
  @EnumSource(Harness.Driver.class)
  void theUrlsOfAStoredLinkAndRefreshHaveTheirCredentialsRedacted(Harness.Driver driver) throws Exception {
    Operation op = Operation.builder("list-exports", Requests.order("{}")).build();
    String link = "<https://api.example.test/exports?page=2&access_token=planted-next>; rel=\"next\", <" + SIGNED
        + ">; rel=\"enclosure\"";
    String refresh = "5; url=https://api.example.test/done?token=planted-refresh";
    ScriptedTransport t = h.transport(op).then(status(201, Map.of("Link", link, "Refresh", refresh)));

    Outcome out = driver.run(h, op, t);

    assertEquals(link, out.response().header("Link").orElseThrow(), "the caller's copy");
    assertEquals(refresh, out.response().header("Refresh").orElseThrow());
    Map<String, List<String>> stored = h.record(op).response().headers();
    assertFalse(stored.toString().contains("planted"), "stored in clear: " + stored);
    assertEquals(List.of("<https://api.example.test/exports?page=2&access_token=redacted>; rel=\"next\", <"
        + SIGNED_REDACTED + ">; rel=\"enclosure\""), stored.get("link"));
    assertEquals(List.of("5; url=https://api.example.test/done?token=redacted"), stored.get("refresh"));
  }
}
