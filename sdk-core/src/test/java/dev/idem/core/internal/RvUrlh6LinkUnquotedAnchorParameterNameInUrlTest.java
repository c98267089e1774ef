package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Review of 0ed9358f: an unquoted anchor now ends at a {@code ;} that starts a name in
 * LINK_PARAMETERS ({@code type}, {@code title}, {@code media}, {@code as}, {@code sizes},
 * {@code nonce}, ...), judged by name alone, so the RvUrlh5LinkUnquotedAnchorSemicolonTest
 * defect comes back whenever the anchor's URL has a matrix parameter or a {@code ;}-separated
 * query pair with one of those very ordinary names: {@code /cars;type=suv} (a JAX-RS/Spring
 * {@code @MatrixVariable}) or {@code ?year=2024;type=csv&...} (older servlet containers, Rails and
 * Perl's CGI split on {@code ;}). The anchor's URL is cut there; the rest is read as a Link
 * parameter named {@code type} or {@code title} whose token value is never read as a URL, and the
 * token or signature after it is stored in clear. The same URLs as a Location are redacted, and
 * RvUrlh5's {@code ;color=} / {@code ;format=} spellings are too: only the parameter's name differs.
 * 3d6174ef redacted all three values; 693bdce7 leaked them (the RvUrlh5 defect); 0ed9358f fixes
 * RvUrlh5's names but not these.
 */
class RvUrlh6LinkUnquotedAnchorParameterNameInUrlTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void aTokenAfterATypeMatrixParameterOfAnUnquotedAnchorIsRedacted() {
    String value = "</cars;type=suv?page=2>; rel=\"next\"; "
        + "anchor=/cars;type=suv?access_token=planted-token; title=\"SUVs\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }

  @Test
  void aTokenAfterATitleMatrixParameterOfAnUnquotedAnchorIsRedacted() {
    String value = "</books;title=dune?page=2>; rel=\"next\"; anchor=/books;title=dune?access_token=planted-token";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }

  @Test
  void aSignatureAfterASemicolonSeparatedTypePairOfAnUnquotedAnchorIsRedacted() {
    String value = "<https://files.example.test/reports/2024.csv>; rel=\"alternate\"; "
        + "anchor=https://files.example.test/reports?year=2024;type=csv&sv=2022-11-02&sig=planted-sig";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }

  /** The same URLs as a Location are redacted (passes now): only the Link reading loses them. */
  @Test
  void theSameUrlsAsALocationAreRedacted() {
    assertEquals("/cars;type=suv?access_token=redacted",
        UrlHeaders.redact("Location", "/cars;type=suv?access_token=planted-token", urls));
    assertEquals("https://files.example.test/reports?year=2024;type=csv&sv=2022-11-02&sig=redacted",
        UrlHeaders.redact("Location",
            "https://files.example.test/reports?year=2024;type=csv&sv=2022-11-02&sig=planted-sig", urls));
  }

  /** The executor's journal path: SecretFilter.persistable keeps the token. */
  @Test
  void theJournaledCopyHasNoTokenInClear() {
    SecretFilter filter = new SecretFilter(Set.of(), Set.of(), Set.of());
    ResponseSnapshot response = new ResponseSnapshot(200, Map.of("link", List.of(
        "</cars;type=suv?page=2>; rel=\"next\"; anchor=/cars;type=suv?access_token=planted-token")), new byte[0]);
    ResponseSnapshot stored = filter.persistable(response);
    assertFalse(stored.headers().toString().contains("planted"), "journaled in clear: " + stored.headers());
  }
}
