package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The journal's copy of a response: the executor hands every stored response through here, so a
 * response with nothing to hide must come back as the same instance (no copy on the hot path).
 */
class SecretFilterResponseTest {
  private final SecretFilter filter = new SecretFilter(Set.of("X-Merchant-Pin"), Set.of(), Set.of());

  @Test
  void aResponseWithNothingToHideIsReturnedAsItIsAndSoIsItsTransition() {
    ResponseSnapshot plain = new ResponseSnapshot(201, Map.of("Content-Type", List.of("application/json"),
        "Location", List.of("https://api.example.test/v1/orders/1?expand=items"), "Idempotency-Key", List.of("k1")),
        "{}".getBytes(StandardCharsets.UTF_8));
    assertSame(plain, filter.persistable(plain));
    Transition t = Transition.finish(OperationState.SUCCEEDED, Instant.EPOCH, plain, null);
    assertSame(t, filter.persistable(t));
    Transition retry = Transition.retryAt(Instant.EPOCH, Instant.EPOCH, "503");
    assertSame(retry, filter.persistable(retry));
    assertNull(filter.persistable((ResponseSnapshot) null));
  }

  @Test
  void aSecretHeaderIsLeftOutAndTheRestKeptWithStatusAndBody() {
    ResponseSnapshot r = new ResponseSnapshot(200, Map.of("X-Merchant-Pin", List.of("1234"),
        "Set-Cookie", List.of("sid=1"), "X-Request-Id", List.of("r1")), "ok".getBytes(StandardCharsets.UTF_8));
    ResponseSnapshot kept = filter.persistable(r);
    assertEquals(new ResponseSnapshot(200, Map.of("X-Request-Id", List.of("r1")),
        "ok".getBytes(StandardCharsets.UTF_8)), kept);
    Transition t = filter.persistable(Transition.finish(OperationState.FAILED, Instant.EPOCH, r, "HTTP 200?"));
    assertEquals(kept, t.response());
    assertEquals("HTTP 200?", t.reason());
  }

  /** Whichever header is found first to need something, every other one is kept, left out or redacted. */
  @Test
  void locationsAndSecretHeadersTogetherAreEachHandledOnce() {
    ResponseSnapshot r = new ResponseSnapshot(201, Map.of(
        "Content-Location", List.of("/v1/orders/1?page=2", "/v1/orders/1?sig=s1"),
        "Location", List.of("/v1/orders/1?token=t1"), "Set-Cookie", List.of("sid=1"),
        "X-Merchant-Pin", List.of("1234"), "X-Request-Id", List.of("r1"), "A-First", List.of("a")), new byte[0]);
    assertEquals(new ResponseSnapshot(201, Map.of(
        "Content-Location", List.of("/v1/orders/1?page=2", "/v1/orders/1?sig=redacted"),
        "Location", List.of("/v1/orders/1?token=redacted"), "X-Request-Id", List.of("r1"),
        "A-First", List.of("a")), new byte[0]), filter.persistable(r));
    ResponseSnapshot plainLocation = new ResponseSnapshot(201, Map.of("Location", List.of("/v1/orders/1?page=2"),
        "Set-Cookie", List.of("sid=1")), new byte[0]);
    assertEquals(new ResponseSnapshot(201, Map.of("Location", List.of("/v1/orders/1?page=2")), new byte[0]),
        filter.persistable(plainLocation));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "/v1/exports/1?access_token=t1&page=2|/v1/exports/1?access_token=redacted&page=2",
      "https://b.example.test/f?access%5Ftoken=t1|https://b.example.test/f?access%5Ftoken=redacted",
      "https://b.example.test/f?X-Amz-Signature=s1#frag|https://b.example.test/f?X-Amz-Signature=redacted#redacted",
      "https://app.example.test/cb#state=s1&access_token=t1|https://app.example.test/cb#redacted",
      "https://app.example.test/cb#/route?id_token=t1|https://app.example.test/cb#redacted",
      "https://app.example.test/cb#t1BareToken|https://app.example.test/cb#redacted",
      "https://b.example.test/f#section-2|https://b.example.test/f#redacted",
      "https://a.blob.core.windows.net/c/b?sv=2022-11-02&se=2026-12-31&sp=r&sig=s1"
          + "|https://a.blob.core.windows.net/c/b?sv=2022-11-02&se=2026-12-31&sp=r&sig=redacted",
      "https://maps.example.test/geo?address=Paris&KEY=k1|https://maps.example.test/geo?address=Paris&KEY=redacted",
      "/cart;jsessionid=j1/items;v=2?page=1|/cart;jsessionid=redacted/items;v=2?page=1",
      "/cart;v=2;JSESSIONID=j1|/cart;v=2;JSESSIONID=redacted",
      "/c/b;Sig=s1;author=a|/c/b;Sig=redacted;author=a",
      "https://h.example.test/cb?page=1&next=https://u:p1@idp.example.test/|https://h.example.test/cb?page=1&next=redacted",
      "/cb?redirect=https%3A%2F%2Fu%3Ap1%40idp.example.test%2F&page=1|/cb?redirect=redacted&page=1",
      "/cb?redirect=https%3A%2F%2Fidp.example.test%2Fcb%3Faccess_token%3Dt1|/cb?redirect=redacted",
      "/cb?redirect=https%253A%252F%252Fu%253Ap1%2540idp.example.test%252F|/cb?redirect=redacted",
      "/cb?next=/login;jsessionid=j1|/cb?next=redacted",
      "/cb?next=https%3A%2F%2Fidp.example.test%2F%23access_token%3Dt1|/cb?next=redacted",
      "/cb?next=https%3A%2F%2Fapp.example.test%2F%23%2Fcallback%3Faccess_token%3Dt1|/cb?next=redacted",
      "/cb?next=%3Faccess_token%3Dt1|/cb?next=redacted",
      "/cb?next=%20https%3A%2F%2Fu%3Ap1%40idp.example.test%2F|/cb?next=redacted",
      "/cb?next=https%253A%252F%252Fidp.example.test%252Fcb%3FAPI_KEY%3Dk1|/cb?next=redacted",
      "//cdn.example.test/f?token=t1|//cdn.example.test/f?token=redacted",
      "/c/b?sv=2022-11-02&amp;sp=r&amp;sig=s1|/c/b?sv=2022-11-02&amp;sp=r&amp;sig=redacted",
      "/c/b?sv=2022-11-02&amp;amp;SIG=s1&amp;se=2026|/c/b?sv=2022-11-02&amp;amp;SIG=redacted&amp;se=2026",
      "/cb?page=1&amp;next=https://u:p1@idp.example.test/|/cb?page=1&amp;next=redacted",
      "/cb?next=%2Fcb%3Fa%3D1%26amp%3Bkey%3Dk1|/cb?next=redacted",
      "/f?a=1;access_token=t1&b=2|/f?a=1;access_token=redacted&b=2",
      "/f?a;sig=s1;sp=r;Key=k1|/f?a;sig=redacted;sp=r;Key=redacted",
      "/cb?next=%2Fcb%3Fstate%3Ds1%3Btoken%3Dt1|/cb?next=redacted",
      "https://k1:s1@b.example.test/f|https://redacted@b.example.test/f",
      "https://k1@b.example.test|https://redacted@b.example.test",
  })
  void aStoredUrlHasItsCredentialsRedacted(String url, String stored) {
    assertEquals(stored, filter.redactUrl(url));
  }

  @ParameterizedTest
  @ValueSource(strings = {"https://b.example.test/f", "/v1/orders/1", "https://b.example.test/f?page=2&sort=asc",
      "https://b.example.test/f?access_token=", "https://b.example.test/f?access_token&x=1",
      "https://b.example.test/f?email=a@b.example.test", "https://b.example.test/a//b?q=1", "/a//b@c", "?", "#",
      "https://b.example.test/f?sv=2022-11-02&se=2026-12-31&sp=r&signed=yes&keys=a",
      "/cart;v=2/items;lang=fr?page=1", "/cb?next=https://idp.example.test/cb?page=2",
      "/cb?next=https%3A%2F%2Fidp.example.test%2Fcb%3Fpage%3D2%23top", "/cb?q=100%25&r=%zz&s=a;b",
      "/f?q=a;b=c;;=x;token;sig=&ids=1;2",
      "/books;author=tolkien;year=1954/reviews;session=2;token=t?page=1",
      "/cb?next=https%3A%2F%2Fapp.example.test%2F%23%2Faccount%2Ftokens%3Fpage%3D2",
      "/cb?return_to=%2Fbooks%3Fauthor%3Dtolkien%26session%3D2%26session_id%3D%7BID%7D",
      "/cb?subject=Why%20is%20my%20session%20slow%3F%20token%3Dx&sort=name%3Bkey%3Dasc",
      "/cb?redirect_uri=https%3A%2F%2Fapp.example.test%2Fcb%3Freturn_to%3D%252Fsearch%253Fq%253Dred%252520shoes",
      "/cb?redirect_uri=https%3A%2F%2Fapp.example.test%2Fcb%3Freturn_to%3D%252Fagenda%253Fat%253D10%25253A00"})
  void aUrlWithoutACredentialIsKeptAsTheSameString(String url) {
    assertSame(url, filter.redactUrl(url));
  }

  /**
   * An allowed name is kept in clear with whatever its value holds; an allowed nested name is kept
   * inside a nested URL too.
   */
  @Test
  void anAllowedNameIsKeptWithItsNestedUrl() {
    SecretFilter allowing = new SecretFilter(Set.of(), Set.of(), Set.of("next", "key"));
    assertSame("/cb?next=https://u:p@idp.example.test/", allowing.redactUrl("/cb?next=https://u:p@idp.example.test/"));
    assertSame("/cb?r=%2Fmaps%3Fkey%3Dk1", allowing.redactUrl("/cb?r=%2Fmaps%3Fkey%3Dk1"));
    assertEquals("/cb?r=redacted", filter.redactUrl("/cb?r=%2Fmaps%3Fkey%3Dk1"));
  }

  /**
   * A URL nested deeper than MAX_NESTING levels (each a URL in a value, decoded once; or one more
   * decoding of a value encoded twice) is not read further: whatever could hold a credential there
   * counts as one.
   */
  @Test
  void aValueNestedBelowTheLastLevelReadCountsAsACredential() {
    String nested = "x";
    for (int i = 0; i < UrlCredentials.MAX_NESTING; i++) {
      nested = "/a?n=" + nested;
    }
    assertSame(nested, filter.redactUrl(nested), "innocent at every level read");
    String deeper = "/a?n=" + nested.replace("n=x", "n=x@y");
    assertEquals("/a?n=redacted", filter.redactUrl(deeper));
    String encoded = "y";
    for (int i = 0; i <= UrlCredentials.MAX_NESTING; i++) {
      encoded = java.net.URLEncoder.encode("/b?m=" + encoded, java.nio.charset.StandardCharsets.UTF_8);
    }
    assertEquals("/a?n=redacted", filter.redactUrl("/a?n=" + encoded));
  }

  /**
   * Hostile Locations the size of OkHttp's header limit: each shape once made a search run to the
   * end of the URL per part (pairs without '=', path parameters, nested values). Run, not timed:
   * the walk is linear (see UrlCredentials), and a quadratic one would take minutes here.
   */
  @Test
  void hostileShapesAreWalkedWithBoundedSearches() {
    int n = 256 * 1024;
    for (String unit : List.of("a&", ";a", "/;", "n=/?", "n=%3F", "n=a@b&", "?n=;&", "n=//x@y/?", "n=%253F&",
        "n=%2F%3Fm%3D%2525&", ";a=b", "n=;", "amp;", "n=%2F%3Fm%3D1%3B",
        ";n=/?", ";n=%2F%3Fm%3D1", ";n=//x@y/?", "a=1;n=/;a=b?m=1;")) {
      String url = "https://h.example.test/p?" + unit.repeat(n / unit.length()) + "&token=t1";
      String redacted = filter.redactUrl(url);
      assertTrue(redacted.endsWith("token=redacted") || redacted.contains("=redacted"), unit);
    }
  }

  @Test
  void anAllowedQueryParameterIsKeptInAStoredUrl() {
    SecretFilter allowing = new SecretFilter(Set.of(), Set.of(), Set.of("session"));
    assertSame("/f?session=weekly", allowing.redactUrl("/f?session=weekly"));
    assertTrue(allowing.isSecretQueryParameter("access_token"));
    assertFalse(allowing.isSecretQueryParameter("session"));
  }
}
