package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The walk's own pieces; what it finds in whole URLs is in SecretFilterResponseTest and SecretRuleTest. */
class UrlCredentialsTest {

  /** Lenient, as OkHttp and browsers read a value: a stray '%' is kept, every valid escape decoded. */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "a%20b|a b",
      "a+b|a b",
      "caf%C3%A9|café",
      "100%|100%",
      "100%25|100%",
      "%zz%2F|%zz/",
      "%2|%2",
      "%C3|\uFFFD",
      "x%3Dy%26z%3D100%|x=y&z=100%",
  })
  void decodesValidEscapesAndKeepsAStrayPercent(String raw, String decoded) {
    assertEquals(decoded, UrlCredentials.decode(raw, 0, raw.length()));
  }

  @Test
  void aValueWithNothingToDecodeIsReturnedAsItIs() {
    String plain = "invoices/2026/1.pdf";
    assertSame(plain, UrlCredentials.decode(plain, 0, plain.length()));
    assertEquals("2026", UrlCredentials.decode(plain, 9, 13));
  }
}
