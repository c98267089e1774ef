package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * Review of bfc7ff00 (low severity): UrlHeaders reads an unquoted {@code anchor} as a URL
 * (UrlHeadersTest's {@code ANCHOR = /x?api_key=k1}), but ends it at the first {@code ;}, so a
 * servlet-encoded anchor ({@code "anchor=" + response.encodeURL("/cart")}, giving
 * {@code /cart;jsessionid=...}) loses its path parameter to the Link's parameter list: the
 * {@code ;jsessionid=} is read as a link parameter named {@code jsessionid}, which no rule judges,
 * and the session id is stored in clear. The same URL quoted, or as a target, is redacted.
 */
class RvUrlh2LinkUnquotedAnchorPathParameterTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void anUnquotedAnchorsJsessionidIsRedacted() {
    String value = "</cart/items>; rel=\"collection\"; anchor=/cart;jsessionid=PLANTED0123456789";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("PLANTED"), "stored in clear: " + stored);
  }
}
