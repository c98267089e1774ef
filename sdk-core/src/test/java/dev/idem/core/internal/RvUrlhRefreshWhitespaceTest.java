package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.spi.ResponseSnapshot;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Review of 0e735631: a Refresh whose delay and URL are separated by whitespace only. The HTML
 * standard's shared declarative refresh steps accept ASCII whitespace as the separator (after the
 * delay: "if the code point is not ';', ',' or ASCII whitespace, return"; then skip whitespace,
 * then an optional ';' or ','), so browsers navigate to {@code 5 url=https://...} as they do to
 * {@code 5; url=https://...}. UrlHeaders.refresh looks only for ';' or ',' and, finding none,
 * returns the value as "a delay alone": the URL's credential is stored in clear.
 */
class RvUrlhRefreshWhitespaceTest {
  private final UrlCredentials urls = UrlCredentials.defaults();

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "5 url=https://h.example.test/done?access_token=t1|5 url=https://h.example.test/done?access_token=redacted",
      "5 https://h.example.test/done?access_token=t1|5 https://h.example.test/done?access_token=redacted",
      "0 URL='https://u:pw@h.example.test/x'|0 URL='https://redacted@h.example.test/x'",
      "0  url = /next;jsessionid=j1|0  url = /next;jsessionid=redacted",
  })
  void aRefreshWhoseUrlFollowsTheDelayAfterWhitespaceIsRedacted(String value, String stored) {
    assertEquals(stored, UrlHeaders.redact("Refresh", value, urls));
  }

  /** The executor's journal path: SecretFilter.persistable keeps the token. */
  @Test
  void theJournaledCopyOfSuchARefreshHasNoTokenInClear() {
    SecretFilter filter = new SecretFilter(Set.of(), Set.of(), Set.of());
    ResponseSnapshot response = new ResponseSnapshot(200,
        Map.of("refresh", List.of("5 url=https://h.example.test/done?access_token=planted-refresh")), new byte[0]);
    ResponseSnapshot stored = filter.persistable(response);
    assertFalse(stored.headers().toString().contains("planted"), "journaled in clear: " + stored.headers());
  }
}
