package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * Review of 728c3799 (low severity): a Refresh's quoted URL now runs to the LAST such quote, but a
 * value whose opening quote has no end (cut short, or written {@code "0; url='" + url}) still ends
 * at an apostrophe inside the URL ({@code /authors/o'reilly}): the apostrophe is taken for the
 * closing quote and the query after it, with its token, is kept in clear. The class comment
 * promises "a quote without its end runs to the end of the value, so a value cut short is
 * redacted to its end rather than passed over".
 */
class RvUrlh3RefreshUnclosedQuoteApostropheTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void anUnclosedSingleQuotedRefreshUrlWithAnApostropheIsRedactedToItsEnd() {
    String value = "0; url='https://shop.example.test/authors/o'reilly/orders?access_token=planted-refresh";
    String stored = UrlHeaders.redact("Refresh", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }
}
