package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * Review of 728c3799: an unquoted {@code anchor} now runs to a space or comma, so in the usual
 * {@code "; "} spelling it consumes the {@code ;} that opens the NEXT parameter ({@code next} is
 * the space after it; only the URL's range drops the trailing {@code ;}). The next parameter is
 * then never read as a parameter: an {@code imagesrcset} after it is not redacted, and a quoted
 * {@code title} after it is scanned at the top level, where (since this commit removed the main
 * scan's quote handling) its {@code <} opens a "target" that runs to the next link-value's
 * {@code >}. This brings back RvUrlhLinkQuotedStringTest's defects, behind an unquoted anchor.
 * All three values are redacted correctly at bfc7ff00.
 */
class RvUrlh3LinkUnquotedAnchorNextParameterTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void anImagesrcsetAfterAnUnquotedAnchorIsRedacted() {
    String value = "</cart/items>; rel=\"collection\"; anchor=/cart; "
        + "imagesrcset=\"https://cdn.example.test/c.jpg?X-Amz-Signature=planted-1x 1x\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }

  @Test
  void aLessThanInATitleAfterAnUnquotedAnchorDoesNotHideTheNextTargetsKey() {
    String value = "</maps/1>; rel=\"prev\"; anchor=/maps; title=\"Is 1 < 2?\", "
        + "<https://maps.example.test/static?key=AIzaPLANTED&size=600x300>; rel=\"preview\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("AIzaPLANTED"), "key= stored in clear: " + stored);
  }

  @Test
  void aLessThanInATitleAfterAnUnquotedAnchorDoesNotHideTheNextTargetsUserInfo() {
    String value = "</a>; anchor=/x; title=\"a < b/c\", <https://u:pw@h.example.test/x>; rel=next";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertEquals("</a>; anchor=/x; title=\"a < b/c\", <https://redacted@h.example.test/x>; rel=next", stored);
  }

  @Test
  void aLinkWithNoCredentialIsKeptAsWrittenBehindAnUnquotedAnchor() {
    String value = "</issues?page=2>; rel=\"next\"; anchor=/issues; title=\"Issues < #100\", "
        + "</issues?page=1>; rel=\"first\"";
    // No credential and no fragment in any URL: the value must come back as is (the same instance).
    assertEquals(value, UrlHeaders.redact("Link", value, urls));
  }
}
