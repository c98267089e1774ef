package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * Review of 3d6174ef (pre-existing since 0e735631, low severity): an unquoted {@code anchor} stops
 * at any {@code ,}, but a comma is an ordinary, unencoded character in a query (a field list,
 * {@code ?fields=id,name}; RFC 3986 sub-delim, left raw by UriComponentsBuilder and by browsers).
 * The anchor's URL is cut at it, and a credential after it is scanned as top-level text: stored in
 * clear. A comma that separates link-values is followed (after optional spaces) by the next
 * link-value's {@code <}; this one is not.
 */
class RvUrlh4LinkUnquotedAnchorCommaTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void aTokenAfterACommaInAnUnquotedAnchorsQueryIsRedacted() {
    String value = "</me/friends?after=QVFI>; rel=\"next\"; "
        + "anchor=/me/friends?fields=id,name&access_token=planted-token; title=\"Friends\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
    assertEquals("</me/friends?after=QVFI>; rel=\"next\"; "
        + "anchor=/me/friends?fields=id,name&access_token=redacted; title=\"Friends\"", stored);
  }
}
