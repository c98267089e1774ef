package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/**
 * Review of 3d6174ef (low severity, no credential missed): a Refresh's quoted URL is now closed only
 * by a quote that ends the value, so a value with anything after its closing quote (the common
 * stray {@code ;} of {@code "Refresh: 0; url='" + url + "';"}) has its URL run to the end of the
 * value. The closing quote and what follows it are then redacted as part of the credential's value
 * or of the fragment: text outside the URL is lost from the stored copy. 728c3799 (to the last
 * quote), bfc7ff00 and 0e735631 all keep {@code ';} as written.
 */
class RvUrlh4RefreshTextAfterClosingQuoteTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void theClosingQuoteAndTrailingSemicolonAreKeptAfterARedactedToken() {
    String value = "0; url='https://shop.example.test/orders?access_token=planted-refresh';";
    assertEquals("0; url='https://shop.example.test/orders?access_token=redacted';",
        UrlHeaders.redact("Refresh", value, urls));
  }

  @Test
  void theClosingQuoteAndTrailingSemicolonAreKeptAfterARedactedFragment() {
    String value = "0; url='/docs/setup#step-2';";
    assertEquals("0; url='/docs/setup#redacted';", UrlHeaders.redact("Refresh", value, urls));
  }
}
