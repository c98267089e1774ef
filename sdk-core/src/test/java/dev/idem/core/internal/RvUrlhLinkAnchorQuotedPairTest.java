package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * Review of 0e735631 (low severity): an {@code anchor} quoted-string ends at the first '"' even
 * when it is a quoted-pair {@code \"} (RFC 9110 5.6.4), so the rest of the anchor, as a recipient
 * unescapes it, is not read as part of the URL and a credential after it is stored in clear.
 */
class RvUrlhLinkAnchorQuotedPairTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void aQuotedPairInAnAnchorDoesNotEndIt() {
    String value = "</a>; rel=up; anchor=\"https://h.example.test/x?q=\\\"a\\\"&sig=planted-sig\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted-sig"), "stored in clear: " + stored);
  }
}
