package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Review of 693bdce7: an unquoted anchor now ends at its {@code ;jsessionid=}, and the
 * {@code jsessionid} is read as a Link parameter of its own, whose unquoted value ends like any
 * token at a {@code ,}. But what a servlet's {@code encodeURL} writes puts the session id between
 * the path and the query ({@code /me/friends;jsessionid=ABC?fields=id,name&access_token=...}), so
 * the anchor's query is now the jsessionid parameter's value, cut at the query's first comma (the
 * {@code ?fields=id,name} that RvUrlh4LinkUnquotedAnchorCommaTest keeps in an anchor): the rest,
 * {@code name&access_token=...}, is scanned as text and the token is stored in clear.
 */
class RvUrlh5LinkUnquotedAnchorJsessionidCommaTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void aTokenAfterACommaInTheQueryOfAnUnquotedAnchorWithAJsessionidIsRedacted() {
    String value = "</me/friends?after=QVFI>; rel=\"next\"; "
        + "anchor=/me/friends;jsessionid=1A2B3C4D?fields=id,name&access_token=planted-token; title=\"Friends\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }

  @Test
  void theCompactSpellingToo() {
    String value = "</me/friends?after=QVFI>;rel=\"next\";"
        + "anchor=/me/friends;jsessionid=1A2B3C4D?fields=id,name&access_token=planted-token,"
        + "</me>;rel=\"up\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }

  /** The same URL as a Location is redacted (passes now): only the Link reading loses the token. */
  @Test
  void theSameUrlAsALocationIsRedacted() {
    assertEquals("/me/friends;jsessionid=redacted?fields=id,name&access_token=redacted",
        UrlHeaders.redact("Location",
            "/me/friends;jsessionid=1A2B3C4D?fields=id,name&access_token=planted-token", urls));
  }

  /** The executor's journal path: SecretFilter.persistable keeps the token. */
  @Test
  void theJournaledCopyHasNoTokenInClear() {
    SecretFilter filter = new SecretFilter(Set.of(), Set.of(), Set.of());
    ResponseSnapshot response = new ResponseSnapshot(200, Map.of("link", List.of(
        "</me/friends?after=QVFI>; rel=\"next\"; "
            + "anchor=/me/friends;jsessionid=1A2B3C4D?fields=id,name&access_token=planted-token")), new byte[0]);
    ResponseSnapshot stored = filter.persistable(response);
    assertFalse(stored.headers().toString().contains("planted"), "journaled in clear: " + stored.headers());
  }
}
