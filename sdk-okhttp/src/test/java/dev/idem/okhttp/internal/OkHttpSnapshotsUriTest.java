package dev.idem.okhttp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URI;
import java.util.Random;
import okhttp3.HttpUrl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The snapshot's URI is what {@link HttpUrl#uri()} gives, character for character: it is
 * journaled and fingerprinted, so the shortcut for plain URLs must never change it.
 */
class OkHttpSnapshotsUriTest {

  private static void assertSameAsOkHttp(HttpUrl url) {
    URI expected = url.uri();
    URI actual = OkHttpSnapshots.uriOf(url);
    assertEquals(expected, actual, url.toString());
    assertEquals(expected.toString(), actual.toString(), url.toString());
    assertEquals(expected.getRawPath(), actual.getRawPath(), url.toString());
    assertEquals(expected.getRawQuery(), actual.getRawQuery(), url.toString());
    // Again, from the thread's one-entry memo of its last URL.
    assertEquals(expected.toString(), OkHttpSnapshots.uriOf(HttpUrl.get(url.toString())).toString());
  }

  @ParameterizedTest
  @ValueSource(strings = {"http://127.0.0.1:40123/orders", "https://api.example.com/v1/charges?expand=customer&limit=3",
      "https://API.Example.COM:443/a/b/../c/./d", "http://h/p%20q?x=%2B+y", "http://h/p?q=a%zz", "http://h/%zz",
      "http://h/a[b]?c=[d]", "http://h/a{b}|c^d`e", "http://h/x?y=\"z\"", "http://h/#frag", "http://h/p#a b",
      "http://user:pa%20ss@h/p", "http://[::1]:8080/p", "http://h/caf\u00e9?q=\u4e2d", "http://xn--caf-dma.example/",
      "http://caf\u00e9.example/p", "http://h/p?a=1&a=2&&b", "http://h/p?", "http://h/p;matrix=1/x", "http://h/'()*!$,@:"})
  void sameUriAsOkHttp(String text) {
    assertSameAsOkHttp(HttpUrl.get(text));
  }

  @Test
  void sameUriAsOkHttpOnGeneratedUrls() {
    String alphabet = "aZ09-._~:/?=&+,;@!$'()*%[]{}|^`\"<> #\\\u00e9\u4e2d";
    Random r = new Random(18);
    for (int n = 0; n < 20_000; n++) {
      StringBuilder tail = new StringBuilder();
      for (int i = r.nextInt(12); i > 0; i--) {
        char c = alphabet.charAt(r.nextInt(alphabet.length()));
        tail.append(c);
        if (c == '%' && r.nextBoolean()) {
          tail.append(Integer.toHexString(r.nextInt(256) | 0x100).substring(1));
        }
      }
      HttpUrl url = HttpUrl.parse("http://h.example:8080/" + tail);
      if (url != null) {
        assertSameAsOkHttp(url);
      }
    }
  }
}
