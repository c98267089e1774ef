package dev.idem.core.fingerprint;

import dev.idem.core.spi.RequestSnapshot;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FingerprinterTest {
  private static final Fingerprinter FP = Fingerprinter.defaults();

  private static RequestSnapshot req(String method, String uri, String body, String contentType, String... headers) {
    RequestSnapshot.Builder b = RequestSnapshot.builder(method, URI.create(uri))
        .body(body.getBytes(StandardCharsets.UTF_8), contentType);
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return b.build();
  }

  private static Fingerprint fp(RequestSnapshot r) {
    return FP.fingerprint(r);
  }

  @Test
  void isSha256Hex() {
    assertTrue(fp(req("POST", "https://a.example/x", "{}", "application/json")).hex().matches("[0-9a-f]{64}"));
  }

  /**
   * Journals keep fingerprints: the bytes hashed must never change, or a journaled operation's
   * retry after an upgrade would be refused as a reused key. Values from the release before the
   * length prefixes were hashed byte by byte.
   */
  @Test
  void fingerprintsStayWhatEarlierReleasesJournaled() {
    RequestSnapshot r = req("POST", "https://api.example.com/v1/orders?x=1&y=%C3%A9", "{\"b\":2, \"a\":[1,\"é\"]}",
        "application/json; charset=utf-8", "X-Tenant", "t1");
    assertEquals("7caac7df8c2328aeffe23663d8952aa75d758fbdb7020737ca831604d318356a", fp(r).hex());
    assertEquals("63c34f1302fe268f299640b435ecca9df008b5bc5fae2759b451fef17ae5532a",
        Fingerprinter.withSemanticHeaders(Set.of("x-tenant")).fingerprint(r).hex());
  }

  @Test
  void methodPathAndQueryMatter() {
    Fingerprint base = fp(req("POST", "https://api.example.com/v1/orders?x=1", "{}", "application/json"));
    assertNotEquals(base, fp(req("PUT", "https://api.example.com/v1/orders?x=1", "{}", "application/json")));
    assertNotEquals(base, fp(req("POST", "https://api.example.com/v1/order?x=1", "{}", "application/json")));
    assertNotEquals(base, fp(req("POST", "https://api.example.com/v1/orders?x=2", "{}", "application/json")));
    assertNotEquals(base, fp(req("POST", "https://api.example.com/v1/orders", "{}", "application/json")));
    assertEquals(base, fp(req("post", "https://api.example.com/v1/orders?x=1", "{}", "application/json")));
  }

  @Test
  void hostSchemeAndPortDoNot() {
    Fingerprint base = fp(req("POST", "https://api.example.com/v1/orders", "{}", "application/json"));
    assertEquals(base, fp(req("POST", "https://failover.example.net:8443/v1/orders", "{}", "application/json")));
    assertEquals(base, fp(req("POST", "http://api.example.com/v1/orders", "{}", "application/json")));
  }

  @Test
  void emptyPathIsTheRoot() {
    assertEquals(fp(req("POST", "https://a.example", "", null)), fp(req("POST", "https://a.example/", "", null)));
  }

  @Test
  void bodyMatters() {
    assertNotEquals(fp(req("POST", "https://a.example/x", "{\"amount\":1}", "application/json")),
        fp(req("POST", "https://a.example/x", "{\"amount\":2}", "application/json")));
    assertNotEquals(fp(req("POST", "https://a.example/x", "a", "text/plain")),
        fp(req("POST", "https://a.example/x", "b", "text/plain")));
  }

  @Test
  void headersMatterOnlyWhenConfiguredAsSemantic() {
    RequestSnapshot v1 = req("POST", "https://a.example/x", "{}", "application/json", "Stripe-Account", "acct_1",
        "traceparent", "00-aaa-01");
    RequestSnapshot v2 = req("POST", "https://a.example/x", "{}", "application/json", "Stripe-Account", "acct_2",
        "traceparent", "00-bbb-01");
    assertEquals(FP.fingerprint(v1), FP.fingerprint(v2));
    Fingerprinter semantic = Fingerprinter.withSemanticHeaders(Set.of("STRIPE-ACCOUNT"));
    assertNotEquals(semantic.fingerprint(v1), semantic.fingerprint(v2));
    RequestSnapshot v3 = req("POST", "https://a.example/x", "{}", "application/json", "stripe-account", "acct_1",
        "traceparent", "00-ccc-01");
    assertEquals(semantic.fingerprint(v1), semantic.fingerprint(v3), "tracing noise stays out");
    // a semantic header that is absent is not the same as one that is present
    RequestSnapshot none = req("POST", "https://a.example/x", "{}", "application/json");
    assertNotEquals(semantic.fingerprint(v1), semantic.fingerprint(none));
  }

  @ParameterizedTest
  @ValueSource(strings = {"application/json", "application/json; charset=utf-8", "APPLICATION/JSON;charset=UTF-8",
      "application/vnd.api+json", "application/problem+json; charset=utf-8", "text/json"})
  void jsonBodiesAreCanonicalized(String contentType) {
    assertEquals(fp(req("POST", "https://a.example/x", "{\"b\":2.0,\"a\":\"\\u00e9\"}", contentType)),
        fp(req("POST", "https://a.example/x", "{ \"a\" : \"\u00e9\", \"b\" : 2 }", contentType)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"text/plain", "application/x-www-form-urlencoded", "application/jsonp", "application/octet-stream"})
  void otherBodiesUseTheirRawBytes(String contentType) {
    assertNotEquals(fp(req("POST", "https://a.example/x", "{\"b\":2,\"a\":1}", contentType)),
        fp(req("POST", "https://a.example/x", "{\"a\":1,\"b\":2}", contentType)));
  }

  @Test
  void noContentTypeMeansRawBytes() {
    assertNotEquals(fp(req("POST", "https://a.example/x", "{\"b\":2,\"a\":1}", null)),
        fp(req("POST", "https://a.example/x", "{\"a\":1,\"b\":2}", null)));
  }

  @Test
  void jsonThatCannotBeCanonicalizedFallsBackToRawBytes() {
    // duplicate keys: two spellings differ, and the same bytes still agree
    Fingerprint dup = fp(req("POST", "https://a.example/x", "{\"a\":1,\"a\":2}", "application/json"));
    assertEquals(dup, fp(req("POST", "https://a.example/x", "{\"a\":1,\"a\":2}", "application/json")));
    assertNotEquals(dup, fp(req("POST", "https://a.example/x", "{\"a\":2,\"a\":1}", "application/json")));
    assertNotEquals(dup, fp(req("POST", "https://a.example/x", "{\"a\":1, \"a\":2}", "application/json")));
    // invalid JSON labelled as JSON
    assertNotEquals(fp(req("POST", "https://a.example/x", "{oops", "application/json")),
        fp(req("POST", "https://a.example/x", "{oops ", "application/json")));
  }

  @Test
  void fieldsAreLengthPrefixed() {
    // the path/query field and the body field cannot trade bytes
    assertNotEquals(fp(req("POST", "https://a.example/ab", "c", "text/plain")),
        fp(req("POST", "https://a.example/a", "bc", "text/plain")));
  }
}
