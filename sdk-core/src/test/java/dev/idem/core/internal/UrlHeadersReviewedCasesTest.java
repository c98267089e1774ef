package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Link and Refresh values that six review rounds of {@link UrlHeaders} (0e735631 to b9102fac)
 * found stored with a credential in clear, or with text outside a URL altered; each failed on the
 * code it was found on. Every planted credential must be gone from the stored copy, both as
 * {@link UrlHeaders} redacts the value and as the executor's journal keeps the response
 * ({@link SecretFilter#persistable(ResponseSnapshot)}); the values with an exact stored form must
 * have it, and one with nothing to redact must come back as the same instance.
 */
class UrlHeadersReviewedCasesTest {
  private static final UrlCredentials URLS = UrlCredentials.defaults();
  private static final SecretFilter JOURNAL = new SecretFilter(Set.of(), Set.of(), Set.of());

  /** Values whose planted credential (any case of "planted") was stored in clear. */
  static Stream<Arguments> planted() {
    return Stream.of(
        // Refresh: a URL after the delay and spaces only (browsers follow it), an apostrophe in a
        // single-quoted URL, quoted or cut short.
        Arguments.of("Refresh", "5 url=https://h.example.test/done?access_token=planted-refresh"),
        Arguments.of("Refresh", "0; url='https://shop.example.test/authors/o'reilly/orders?access_token=planted-refresh'"),
        Arguments.of("Refresh", "0; url='https://shop.example.test/authors/o'reilly/orders?access_token=planted-refresh"),
        // Link: a preload's imagesrcset; a quoted-pair in a quoted anchor; a stray quote (an inch
        // mark) in a title hiding the next target.
        Arguments.of("Link", "<https://b.example.test/i.jpg?X-Amz-Signature=planted-1x>; rel=preload; as=\"image\"; "
            + "imagesrcset=\"https://b.example.test/i.jpg?X-Amz-Signature=planted-1x 1x, "
            + "https://b.example.test/i2.jpg?X-Amz-Signature=planted-2x 2x\"; imagesizes=\"50vw\""),
        Arguments.of("Link", "</a>; rel=up; anchor=\"https://h.example.test/x?q=\\\"a\\\"&sig=planted-sig\""),
        Arguments.of("Link", "</products/7>; rel=\"item\"; title=\"27\" monitor\", "
            + "<https://cdn.example.test/p/7.pdf?X-Amz-Signature=planted-sig&X-Amz-Expires=300>; rel=\"enclosure\""),
        // An unquoted anchor (outside RFC 8288, but written: encodeURL) read as a URL whole: its own
        // ;jsessionid=, matrix parameters and ;-separated pairs of any name, a comma in its query,
        // and the parameters after it read as parameters, in the "; " and the compact spelling.
        Arguments.of("Link", "</cart/items>; rel=\"collection\"; anchor=/cart;jsessionid=PLANTED0123456789"),
        Arguments.of("Link", "</cart/items>; rel=\"collection\"; anchor=/cart; "
            + "imagesrcset=\"https://cdn.example.test/c.jpg?X-Amz-Signature=planted-1x 1x\""),
        Arguments.of("Link", "</maps/1>; rel=\"prev\"; anchor=/maps; title=\"Is 1 < 2?\", "
            + "<https://maps.example.test/static?key=AIzaPLANTED&size=600x300>; rel=\"preview\""),
        Arguments.of("Link", "</cart/items>;rel=\"collection\";anchor=/cart;imagesrcset=\""
            + "https://cdn.example.test/c.jpg?X-Amz-Signature=planted-1x 1x, "
            + "https://cdn.example.test/c2.jpg?X-Amz-Signature=planted-2x 2x\""),
        Arguments.of("Link", "</maps/1>;rel=\"prev\";anchor=/maps;title=\"Is 1 < 2?\","
            + "<https://maps.example.test/static?key=AIzaPLANTED&size=600x300>;rel=\"preview\""),
        Arguments.of("Link", "</me/friends?after=QVFI>; rel=\"next\"; "
            + "anchor=/me/friends;jsessionid=1A2B3C4D?fields=id,name&access_token=planted-token; title=\"Friends\""),
        Arguments.of("Link", "</me/friends?after=QVFI>;rel=\"next\";"
            + "anchor=/me/friends;jsessionid=1A2B3C4D?fields=id,name&access_token=planted-token,</me>;rel=\"up\""),
        Arguments.of("Link", "</cars;color=red?page=2>; rel=\"next\"; "
            + "anchor=/cars;color=red?access_token=planted-token; title=\"Red cars\""),
        Arguments.of("Link", "<https://files.example.test/reports/2024.csv>; rel=\"alternate\"; type=\"text/csv\"; "
            + "anchor=https://files.example.test/reports?year=2024;format=csv&sv=2022-11-02&sig=planted-sig"),
        Arguments.of("Link", "</cars;type=suv?page=2>; rel=\"next\"; "
            + "anchor=/cars;type=suv?access_token=planted-token; title=\"SUVs\""),
        Arguments.of("Link", "</books;title=dune?page=2>; rel=\"next\"; anchor=/books;title=dune?access_token=planted-token"),
        Arguments.of("Link", "<https://files.example.test/reports/2024.csv>; rel=\"alternate\"; "
            + "anchor=https://files.example.test/reports?year=2024;type=csv&sv=2022-11-02&sig=planted-sig"));
  }

  @ParameterizedTest
  @MethodSource("planted")
  void noPlantedCredentialIsStoredInClear(String header, String value) {
    String stored = UrlHeaders.redact(header, value, URLS);
    assertFalse(stored.toLowerCase(Locale.ROOT).contains("planted"), "stored in clear: " + stored);
    ResponseSnapshot journaled = JOURNAL.persistable(new ResponseSnapshot(200, Map.of(header, List.of(value)),
        new byte[0]));
    assertFalse(journaled.headers().toString().toLowerCase(Locale.ROOT).contains("planted"),
        "journaled in clear: " + journaled.headers());
  }

  /** Values with their exact stored form: the credentials redacted, every other character as written. */
  static Stream<Arguments> exact() {
    return Stream.of(
        Arguments.of("Refresh", "5 https://h.example.test/done?access_token=t1",
            "5 https://h.example.test/done?access_token=redacted"),
        Arguments.of("Refresh", "0 URL='https://u:pw@h.example.test/x'", "0 URL='https://redacted@h.example.test/x'"),
        Arguments.of("Refresh", "0  url = /next;jsessionid=j1", "0  url = /next;jsessionid=redacted"),
        Arguments.of("Refresh", "0; url='/authors/o'reilly?access_token=planted-refresh'",
            "0; url='/authors/o'reilly?access_token=redacted'"),
        Arguments.of("Refresh", "0; url='https://shop.example.test/orders?access_token=planted-refresh';",
            "0; url='https://shop.example.test/orders?access_token=redacted';"),
        Arguments.of("Refresh", "0; url='/docs/setup#step-2';", "0; url='/docs/setup#redacted';"),
        // A '<' or '#' in a quoted title is no target and no fragment.
        Arguments.of("Link", "</maps/1>; rel=\"prev\"; title=\"Is 1 < 2?\", "
                + "<https://maps.example.test/static?key=AIzaPLANTED&size=600x300>; rel=\"preview\"",
            "</maps/1>; rel=\"prev\"; title=\"Is 1 < 2?\", "
                + "<https://maps.example.test/static?key=redacted&size=600x300>; rel=\"preview\""),
        Arguments.of("Link", "</a>; title=\"a < b/c\", <https://u:pw@h.example.test/x>; rel=next",
            "</a>; title=\"a < b/c\", <https://redacted@h.example.test/x>; rel=next"),
        Arguments.of("Link", "</a>; anchor=/x; title=\"a < b/c\", <https://u:pw@h.example.test/x>; rel=next",
            "</a>; anchor=/x; title=\"a < b/c\", <https://redacted@h.example.test/x>; rel=next"),
        Arguments.of("Link", "</a>;anchor=/x;title=\"a < b/c\",<https://u:pw@h.example.test/x>;rel=next",
            "</a>;anchor=/x;title=\"a < b/c\",<https://redacted@h.example.test/x>;rel=next"),
        Arguments.of("Link", "</cart/items>;rel=\"collection\";anchor=/cart;jsessionid=PLANTED0123456789;title=\"Cart\"",
            "</cart/items>;rel=\"collection\";anchor=/cart;jsessionid=redacted;title=\"Cart\""),
        Arguments.of("Link", "</me/friends?after=QVFI>; rel=\"next\"; "
                + "anchor=/me/friends?fields=id,name&access_token=planted-token; title=\"Friends\"",
            "</me/friends?after=QVFI>; rel=\"next\"; "
                + "anchor=/me/friends?fields=id,name&access_token=redacted; title=\"Friends\""),
        // The ';' before a flag stays the flag's.
        Arguments.of("Link", "</style.css>; rel=preload; anchor=/page?access_token=planted-token; nopush",
            "</style.css>; rel=preload; anchor=/page?access_token=redacted; nopush"),
        Arguments.of("Link", "</style.css>; rel=preload; anchor=#comments; nopush",
            "</style.css>; rel=preload; anchor=#redacted; nopush"),
        // The same URLs as a Location, for comparison.
        Arguments.of("Location", "/me/friends;jsessionid=1A2B3C4D?fields=id,name&access_token=planted-token",
            "/me/friends;jsessionid=redacted?fields=id,name&access_token=redacted"),
        Arguments.of("Location", "/cars;type=suv?access_token=planted-token", "/cars;type=suv?access_token=redacted"),
        Arguments.of("Location", "https://files.example.test/reports?year=2024;format=csv&sv=2022-11-02&sig=planted-sig",
            "https://files.example.test/reports?year=2024;format=csv&sv=2022-11-02&sig=redacted"));
  }

  @ParameterizedTest
  @MethodSource("exact")
  void theStoredFormIsExact(String header, String value, String stored) {
    assertEquals(stored, UrlHeaders.redact(header, value, URLS));
  }

  /** Values with nothing to redact, which a misreading rewrote: the same instance comes back. */
  @ParameterizedTest
  @ValueSource(strings = {
      "</issues/1>; title=\"x < #1\", </issues/2>; rel=next",
      "</issues?page=2>; rel=\"next\"; anchor=/issues; title=\"Issues < #100\", </issues?page=1>; rel=\"first\"",
      "</issues?page=2>;rel=\"next\";anchor=/issues;title=\"Issues < #100\",</issues?page=1>;rel=\"first\"",
      "</books;author=tolkien/editions;session=2?page=2>; rel=\"next\"; anchor=/books;author=tolkien/editions;session=2",
      "</books;author=tolkien/editions;session=2?page=2>; rel=\"next\"; "
          + "anchor=\"/books;author=tolkien/editions;session=2\""})
  void aLinkWithNothingToRedactIsTheSameInstance(String value) {
    assertSame(value, UrlHeaders.redact("Link", value, URLS), () -> UrlHeaders.redact("Link", value, URLS));
  }

  /**
   * A name that equalsIgnoreCase folds to one of the four (U+0130, U+017F) is read as that header:
   * carriesUrls and redact once folded such names differently, and the value was kept as it was.
   */
  @ParameterizedTest
  @ValueSource(strings = {"LOCAT\u0130ON", "L\u0130NK", "Refre\u017Fh"})
  void aNameThatFoldsToOneOfTheFourIsRedacted(String name) {
    assertTrue(UrlHeaders.carriesUrls(name), name);
    String value = name.startsWith("L\u0130") ? "<https://h.example.test/x?token=planted>"
        : name.startsWith("Refre") ? "0; url=https://h.example.test/x?token=planted"
        : "https://h.example.test/x?token=planted";
    String stored = RequestSnapshot.redactedHeaderValue(name, value);
    assertFalse(stored.contains("planted"), name + " stored in clear: " + stored);
  }
}
