package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

/**
 * Review of 0e735631: the HTML standard defines Link header parameters whose values are URLs
 * besides RFC 8288's {@code anchor}: {@code imagesrcset} (a srcset: URL-and-descriptor candidates)
 * for {@code rel=preload; as=image}, which frameworks emit (React/Next.js preload headers). A
 * pre-signed image URL there is stored in clear: UrlHeaders reads only targets and anchor.
 */
class RvUrlhLinkImagesrcsetTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @Test
  void theUrlsOfAPreloadLinksImagesrcsetAreRedacted() {
    String value = "<https://b.example.test/i.jpg?X-Amz-Signature=planted-1x>; rel=preload; as=\"image\"; "
        + "imagesrcset=\"https://b.example.test/i.jpg?X-Amz-Signature=planted-1x 1x, "
        + "https://b.example.test/i2.jpg?X-Amz-Signature=planted-2x 2x\"; imagesizes=\"50vw\"";
    String stored = UrlHeaders.redact("Link", value, urls);
    assertFalse(stored.contains("planted"), "stored in clear: " + stored);
  }
}
