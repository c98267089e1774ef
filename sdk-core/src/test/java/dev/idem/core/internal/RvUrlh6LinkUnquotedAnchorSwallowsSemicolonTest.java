package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * Review of 0ed9358f (low severity: no credential missed, text outside the URL lost): in the usual
 * {@code "; "} spelling, a {@code ;} followed by a parameter that is neither in LINK_PARAMETERS nor
 * quoted does not end an unquoted anchor, so the anchor runs on to the space after that {@code ;},
 * and the {@code ;} is redacted as part of the URL's last query value or of its fragment. A flag
 * such as {@code nopush} (Cloudflare, nginx and h2o's preload opt-out) or any unquoted extension
 * parameter after the anchor then loses its separator in the stored copy. 3d6174ef and 693bdce7
 * both keep the {@code ;} (these tests pass there).
 */
class RvUrlh6LinkUnquotedAnchorSwallowsSemicolonTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void theSemicolonBeforeAnUnknownFlagIsKeptAfterARedactedQuery() {
    String value = "</style.css>; rel=preload; anchor=/page?access_token=planted-token; nopush";
    assertEquals("</style.css>; rel=preload; anchor=/page?access_token=redacted; nopush",
        UrlHeaders.redact("Link", value, urls));
  }

  @Test
  void theSemicolonBeforeAnUnknownFlagIsKeptAfterARedactedFragment() {
    String value = "</style.css>; rel=preload; anchor=#comments; nopush";
    assertEquals("</style.css>; rel=preload; anchor=#redacted; nopush", UrlHeaders.redact("Link", value, urls));
  }
}
