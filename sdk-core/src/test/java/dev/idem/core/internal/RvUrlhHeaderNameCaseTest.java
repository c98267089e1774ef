package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.RequestSnapshot;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Review of 0e735631 (low severity): carriesUrls matches a name with String.equalsIgnoreCase, which
 * also folds U+0130 (capital I with dot) to 'i' and U+017F (long s) to 's', but redact switches on
 * name.toLowerCase(Locale.ROOT), which does not ("LOCATİON" becomes "locati̇on"). A name that
 * carriesUrls accepts is then returned unredacted. The server guard's allowlist is a TreeSet with
 * CASE_INSENSITIVE_ORDER (the same folding), so it stores such a header; before this commit its
 * own equalsIgnoreCase + redactedUrl redacted it.
 */
class RvUrlhHeaderNameCaseTest {
  @ParameterizedTest
  @ValueSource(strings = {"LOCAT\u0130ON", "L\u0130NK", "Refre\u017Fh"})
  void aNameCarriesUrlsAcceptsIsRedacted(String name) {
    assertTrue(UrlHeaders.carriesUrls(name), name);
    String value = name.startsWith("L\u0130") ? "<https://h.example.test/x?token=planted>"
        : name.startsWith("Refre") ? "0; url=https://h.example.test/x?token=planted"
        : "https://h.example.test/x?token=planted";
    String stored = RequestSnapshot.redactedHeaderValue(name, value);
    assertFalse(stored.contains("planted"), name + " stored in clear: " + stored);
  }
}
