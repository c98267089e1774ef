package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Review of bfc7ff00: a Refresh whose URL is single-quoted ({@code 0; url='...'}, the meta-refresh
 * style) is redacted only up to the first {@code '}, and everything after it is kept as written. An
 * apostrophe is a legal, unencoded URL character (an RFC 3986 sub-delim; the WHATWG path
 * percent-encode set leaves it raw, and java.net.URI, Spring's UriComponentsBuilder and OkHttp's
 * HttpUrl keep it in a path), so a path such as {@code /authors/o'reilly/...} ends the "URL" early
 * and the query after it, with its token, is stored in clear. The class comment's own rule says
 * "Whatever follows the delay is taken for the URL even where a browser would ignore the header,
 * since the journal would keep it all the same"; here the journal keeps the token.
 */
class RvUrlh2RefreshQuotedApostropheTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void aTokenAfterAnApostropheInASingleQuotedRefreshUrlIsRedacted() {
    String value = "0; url='https://shop.example.test/authors/o'reilly/orders?access_token=planted-refresh'";
    String stored = UrlHeaders.redact("Refresh", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }

  @Test
  void theRestOfTheValueIsKeptAsWritten() {
    String value = "0; url='/authors/o'reilly?access_token=planted-refresh'";
    assertEquals("0; url='/authors/o'reilly?access_token=redacted'", UrlHeaders.redact("Refresh", value, urls));
  }

  /** The executor's journal path: SecretFilter.persistable keeps the token. */
  @Test
  void theJournaledCopyHasNoTokenInClear() {
    SecretFilter filter = new SecretFilter(Set.of(), Set.of(), Set.of());
    ResponseSnapshot response = new ResponseSnapshot(200,
        Map.of("refresh", List.of("0; url='/authors/o'reilly/orders?access_token=planted-refresh'")), new byte[0]);
    ResponseSnapshot stored = filter.persistable(response);
    assertFalse(stored.headers().toString().contains("planted"), "journaled in clear: " + stored.headers());
  }
}
