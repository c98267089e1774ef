package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/**
 * Review of 693bdce7 (low severity: over-redaction, no leak): the {@code ;name=} pieces of an
 * unquoted anchor's path are now judged by the wide QUERY rule (any name containing auth, session,
 * token, ... or ending in -key), though UrlCredentials.isSecretPathName deliberately uses exact
 * names only because JAX-RS matrix parameters such as {@code ;author=tolkien} and
 * {@code ;session=2} are ordinary. The same URL is kept as a Location or a quoted anchor, but an
 * unquoted anchor's matrix parameter is rewritten to {@code redacted}, and the value is no longer
 * returned as the same instance. (3d6174ef kept both.)
 */
class RvUrlh5LinkAnchorMatrixParameterKeptTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  /** The path rule's own example, as a Location and as a quoted anchor (passes now). */
  @Test
  void anOrdinaryMatrixParameterIsKeptInALocationAndAQuotedAnchor() {
    String location = "/books;author=tolkien/editions;session=2";
    assertSame(location, UrlHeaders.redact("Location", location, urls));
    String quoted = "</books;author=tolkien/editions;session=2?page=2>; rel=\"next\"; "
        + "anchor=\"/books;author=tolkien/editions;session=2\"";
    assertSame(quoted, UrlHeaders.redact("Link", quoted, urls));
  }

  @Test
  void anOrdinaryMatrixParameterOfAnUnquotedAnchorIsKept() {
    String value = "</books;author=tolkien/editions;session=2?page=2>; rel=\"next\"; "
        + "anchor=/books;author=tolkien/editions;session=2";
    assertEquals(value, UrlHeaders.redact("Link", value, urls));
  }
}
