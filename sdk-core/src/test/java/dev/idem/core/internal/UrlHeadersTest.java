package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The response headers that carry URLs besides Location: a stored Link or Refresh kept a
 * credential in its URL in clear (a next-page link's token, a pre-signed download link).
 */
class UrlHeadersTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "<https://api.example.test/items?page=2&access_token=t1>; rel=\"next\""
          + "|<https://api.example.test/items?page=2&access_token=redacted>; rel=\"next\"",
      "<https://api.example.test/items?page=2>; rel=\"next\", <https://api.example.test/items?page=9&token=t2>;"
          + " rel=\"last\"|<https://api.example.test/items?page=2>; rel=\"next\","
          + " <https://api.example.test/items?page=9&token=redacted>; rel=\"last\"",
      "<https://b.example.test/f.pdf?X-Amz-Signature=s1&X-Amz-Expires=300>; rel=enclosure"
          + "|<https://b.example.test/f.pdf?X-Amz-Signature=redacted&X-Amz-Expires=300>; rel=enclosure",
      "</a>; rel=up; anchor=\"https://h.example.test/x?sig=s1\"|</a>; rel=up; anchor=\"https://h.example.test/x?sig=redacted\"",
      "</a>; rel=up;ANCHOR = /x?api_key=k1; title=t|</a>; rel=up;ANCHOR = /x?api_key=redacted; title=t",
      "<https://u:pw@h.example.test/x>; rel=alternate|<https://redacted@h.example.test/x>; rel=alternate",
      "<https://h.example.test/x#access_token=t1>; rel=alternate|<https://h.example.test/x#redacted>; rel=alternate",
      // Cut short: the target runs to the end of the value, and is redacted there.
      "<https://h.example.test/x?token=t1|<https://h.example.test/x?token=redacted",
  })
  void aLinksTargetsAndAnchorsAreRedacted(String value, String stored) {
    assertEquals(stored, UrlHeaders.redact("Link", value, urls));
    assertEquals(stored, UrlHeaders.redact("link", value, urls));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "5; url=https://h.example.test/done?access_token=t1|5; url=https://h.example.test/done?access_token=redacted",
      "0;URL='https://h.example.test/f?sig=s1'|0;URL='https://h.example.test/f?sig=redacted'",
      "0; url = \"/next;jsessionid=j1\"|0; url = \"/next;jsessionid=redacted\"",
      "3, https://h.example.test/?token=t1|3, https://h.example.test/?token=redacted",
      "0; url='https://h.example.test/f?sig=s1|0; url='https://h.example.test/f?sig=redacted",
  })
  void aRefreshsUrlIsRedacted(String value, String stored) {
    assertEquals(stored, UrlHeaders.redact("Refresh", value, urls));
  }

  @ParameterizedTest
  @ValueSource(strings = {"<https://api.example.test/items?page=2>; rel=\"next\"", "<>; title=\"a <b> c\"",
      "no link at all", ""})
  void aLinkWithNoCredentialIsTheSameInstance(String value) {
    assertSame(value, UrlHeaders.redact("Link", value, urls));
  }

  @Test
  void anAnchorsFragmentIsRedactedWhateverItHolds() {
    // A stored URL's fragment is never kept (UrlCredentials): an anchor's neither.
    assertEquals("</a>; rel=up; anchor=\"#redacted\"x",
        UrlHeaders.redact("Link", "</a>; rel=up; anchor=\"#top\"x", urls));
  }

  @Test
  void aRefreshWithNoUrlOrNoCredentialIsTheSameInstance() {
    String delay = "5";
    assertSame(delay, UrlHeaders.redact("Refresh", delay, urls));
    String plain = "5; url=/next?page=2";
    assertSame(plain, UrlHeaders.redact("refresh", plain, urls));
  }

  @Test
  void onlyTheFiveHeadersCarryUrls() {
    for (String name : new String[] {"Location", "content-location", "LINK", "Refresh", "Referer", "REFERER"}) {
      assertTrue(UrlHeaders.carriesUrls(name), name);
    }
    for (String name : new String[] {"Linkx", "X-Location", "Content-Type", "Refresher", "", "Referrer", "Refxxxx",
        "Refrxxx", "Xeferer", "Xefresh"}) {
      assertFalse(UrlHeaders.carriesUrls(name), name);
      String value = "https://h.example.test/x?token=t1";
      assertSame(value, UrlHeaders.redact(name, value, urls), name);
    }
  }

  /** Same length, told apart: a Referer is one URL, a Refresh a delay and then one. */
  @Test
  void aRefererIsOneUrlAndARefreshADelayFirst() {
    assertEquals("https://h.example.test/x?token=redacted",
        UrlHeaders.redact("rEfErEr", "https://h.example.test/x?token=t1", urls));
    assertEquals("0; url=https://h.example.test/x?token=redacted",
        UrlHeaders.redact("REFRESH", "0; url=https://h.example.test/x?token=t1", urls));
  }
}
