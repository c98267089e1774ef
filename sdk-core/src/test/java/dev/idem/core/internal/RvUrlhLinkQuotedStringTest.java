package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * Review of 0e735631: UrlHeaders.link scans a Link value character by character and takes every
 * '<' as the start of a target, including a '<' inside a quoted-string parameter value (a
 * {@code title="1 < 2"}). Such a stray '<' swallows everything up to the next '>' -- the rest of
 * that link-value and the next link-value's real target -- as one "URL". Redacting that piece
 * then misreads the real target: its first query parameter or its user info is missed (stored in
 * clear), or a '#' in the quoted text makes the whole piece a "fragment", replaced by "redacted"
 * (text outside any URL destroyed, a whole link lost) in a value with no credential at all.
 */
class RvUrlhLinkQuotedStringTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void aLessThanInAQuotedTitleDoesNotHideTheNextTargetsQueryCredential() {
    String value = "</maps/1>; rel=\"prev\"; title=\"Is 1 < 2?\", "
        + "<https://maps.example.test/static?key=AIzaPLANTED&size=600x300>; rel=\"preview\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("AIzaPLANTED"), "key= stored in clear: " + stored);
    assertEquals("</maps/1>; rel=\"prev\"; title=\"Is 1 < 2?\", "
        + "<https://maps.example.test/static?key=redacted&size=600x300>; rel=\"preview\"", stored);
  }

  @Test
  void aLessThanInAQuotedTitleDoesNotHideTheNextTargetsUserInfo() {
    String value = "</a>; title=\"a < b/c\", <https://u:pw@h.example.test/x>; rel=next";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertEquals("</a>; title=\"a < b/c\", <https://redacted@h.example.test/x>; rel=next", stored);
  }

  @Test
  void aLinkWithNoCredentialIsNotRewrittenBecauseOfALessThanAndHashInATitle() {
    String value = "</issues/1>; title=\"x < #1\", </issues/2>; rel=next";
    // Nothing here is a credential and no target has a fragment: the value must be stored as is.
    assertEquals(value, UrlHeaders.redact("Link", value, urls));
  }
}
