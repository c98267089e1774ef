package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * Review of bfc7ff00: UrlHeaders.link skips every {@code "} it meets at the top level as the start of
 * a quoted string, to its end or to the end of the value, even where no parameter value begins.
 * A title formatted naively ({@code title="%s"}) with an unescaped inch mark ({@code 27" monitor})
 * leaves an odd {@code "} after the parameter's quoted value. That stray quote is skipped as the
 * start of a quoted string running to the end of the value (or to the next {@code "}), so the next
 * link-value's target is not read and its pre-signed signature is stored in clear. The class
 * comment promises the opposite ("a quote without its end runs to the end of the value, so a value
 * cut short is redacted to its end rather than passed over"). A quote that does not open a parameter's value (after {@code =}) is no quoted string in
 * RFC 8288's grammar; reading only those as quoted would keep RvUrlhLinkQuotedStringTest passing.
 */
class RvUrlh2LinkUnbalancedQuoteTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void aStrayQuoteInATitleDoesNotHideTheNextTargetsCredential() {
    String value = "</products/7>; rel=\"item\"; title=\"27\" monitor\", "
        + "<https://cdn.example.test/p/7.pdf?X-Amz-Signature=planted-sig&X-Amz-Expires=300>; rel=\"enclosure\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }
}
