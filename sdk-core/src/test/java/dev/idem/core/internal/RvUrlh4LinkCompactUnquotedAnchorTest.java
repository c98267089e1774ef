package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Review of 3d6174ef: an unquoted {@code anchor} now stops at a {@code ;} only when a space follows
 * it, which fixes RvUrlh3LinkUnquotedAnchorNextParameterTest for the {@code "; "} spelling only.
 * The compact spelling, no space after {@code ;} (what Spring HATEOAS's {@code Link.toString()}
 * writes: {@code <href>;rel="self";title="..."}, link-values joined by a bare {@code ,}), still has
 * the anchor run over the next parameter's {@code ;name="} to the first space inside that
 * parameter's quoted value. The rest of that value is then scanned at the top level: the second
 * candidate of an {@code imagesrcset} is never redacted, and a {@code <} in a quoted title opens a
 * "target" that swallows the next link-value's real target (its key or user info stored in clear),
 * or whose {@code #} turns into a fragment that replaces text in a value with no credential. All
 * of these are redacted, and the credential-free value kept as is, at bfc7ff00 (whose anchor
 * stopped at every {@code ;}); 728c3799 broke them and 3d6174ef does not restore them.
 */
class RvUrlh4LinkCompactUnquotedAnchorTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void theSecondImagesrcsetCandidateAfterACompactUnquotedAnchorIsRedacted() {
    String value = "</cart/items>;rel=\"collection\";anchor=/cart;imagesrcset=\""
        + "https://cdn.example.test/c.jpg?X-Amz-Signature=planted-1x 1x, "
        + "https://cdn.example.test/c2.jpg?X-Amz-Signature=planted-2x 2x\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }

  @Test
  void aLessThanInATitleAfterACompactUnquotedAnchorDoesNotHideTheNextTargetsKey() {
    String value = "</maps/1>;rel=\"prev\";anchor=/maps;title=\"Is 1 < 2?\","
        + "<https://maps.example.test/static?key=AIzaPLANTED&size=600x300>;rel=\"preview\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("AIzaPLANTED"), "key= stored in clear: " + stored);
  }

  @Test
  void aLessThanInATitleAfterACompactUnquotedAnchorDoesNotHideTheNextTargetsUserInfo() {
    String value = "</a>;anchor=/x;title=\"a < b/c\",<https://u:pw@h.example.test/x>;rel=next";
    assertEquals("</a>;anchor=/x;title=\"a < b/c\",<https://redacted@h.example.test/x>;rel=next",
        UrlHeaders.redact("Link", value, urls));
  }

  @Test
  void aCompactLinkWithNoCredentialIsKeptAsWrittenBehindAnUnquotedAnchor() {
    String value = "</issues?page=2>;rel=\"next\";anchor=/issues;title=\"Issues < #100\","
        + "</issues?page=1>;rel=\"first\"";
    // No credential and no fragment in any URL: the value must come back as is (the same instance).
    assertSame(value, UrlHeaders.redact("Link", value, urls), () -> UrlHeaders.redact("Link", value, urls));
  }

  /** A guard for any fix: the compact anchor's own ;jsessionid= stays redacted (passes now). */
  @Test
  void aCompactUnquotedAnchorsJsessionidIsStillRedacted() {
    String value = "</cart/items>;rel=\"collection\";anchor=/cart;jsessionid=PLANTED0123456789;title=\"Cart\"";
    assertEquals("</cart/items>;rel=\"collection\";anchor=/cart;jsessionid=redacted;title=\"Cart\"",
        UrlHeaders.redact("Link", value, urls));
  }

  /** The executor's journal path: SecretFilter.persistable keeps the second candidate's signature. */
  @Test
  void theJournaledCopyHasNoSignatureInClear() {
    SecretFilter filter = new SecretFilter(Set.of(), Set.of(), Set.of());
    ResponseSnapshot response = new ResponseSnapshot(200, Map.of("link", List.of(
        "</cart/items>;rel=\"preload\";anchor=/cart;imagesrcset=\""
            + "https://cdn.example.test/c.jpg?X-Amz-Signature=planted-1x 1x, "
            + "https://cdn.example.test/c2.jpg?X-Amz-Signature=planted-2x 2x\"")), new byte[0]);
    ResponseSnapshot stored = filter.persistable(response);
    assertFalse(stored.headers().toString().contains("planted"), "journaled in clear: " + stored.headers());
  }
}
