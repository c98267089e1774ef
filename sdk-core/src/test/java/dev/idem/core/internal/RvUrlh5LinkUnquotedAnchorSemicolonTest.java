package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Review of 693bdce7 (a regression: 3d6174ef redacted both values below): an unquoted anchor now
 * ends at its first {@code ;}, and what follows is read as a Link parameter, redacted only if its
 * NAME is a credential's. Any other {@code ;name=} in the anchor's URL, a JAX-RS matrix parameter
 * ({@code /cars;color=red}, which UrlCredentials keeps as ordinary) or a pair of a query split on
 * {@code ;} (older servlet containers, Rails, Perl's CGI: which UrlCredentials reads), takes the
 * rest of the URL as its value, up to the next {@code ;}, space or comma, and that value is never
 * read as (part of) a URL: the query's credential after it is stored in clear.
 */
class RvUrlh5LinkUnquotedAnchorSemicolonTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void aTokenInTheQueryAfterAMatrixParameterOfAnUnquotedAnchorIsRedacted() {
    String value = "</cars;color=red?page=2>; rel=\"next\"; "
        + "anchor=/cars;color=red?access_token=planted-token; title=\"Red cars\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }

  @Test
  void aSignatureAfterASemicolonSeparatedPairOfAnUnquotedAnchorIsRedacted() {
    String value = "<https://files.example.test/reports/2024.csv>; rel=\"alternate\"; type=\"text/csv\"; "
        + "anchor=https://files.example.test/reports?year=2024;format=csv&sv=2022-11-02&sig=planted-sig";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }

  /** The same URLs as a Location are redacted (passes now): only the Link reading loses them. */
  @Test
  void theSameUrlsAsALocationAreRedacted() {
    assertEquals("/cars;color=red?access_token=redacted",
        UrlHeaders.redact("Location", "/cars;color=red?access_token=planted-token", urls));
    assertEquals("https://files.example.test/reports?year=2024;format=csv&sv=2022-11-02&sig=redacted",
        UrlHeaders.redact("Location",
            "https://files.example.test/reports?year=2024;format=csv&sv=2022-11-02&sig=planted-sig", urls));
  }

  /** The executor's journal path: SecretFilter.persistable keeps the token. */
  @Test
  void theJournaledCopyHasNoTokenInClear() {
    SecretFilter filter = new SecretFilter(Set.of(), Set.of(), Set.of());
    ResponseSnapshot response = new ResponseSnapshot(200, Map.of("link", List.of(
        "</cars;color=red?page=2>; rel=\"next\"; anchor=/cars;color=red?access_token=planted-token")), new byte[0]);
    ResponseSnapshot stored = filter.persistable(response);
    assertFalse(stored.headers().toString().contains("planted"), "journaled in clear: " + stored.headers());
  }
}
