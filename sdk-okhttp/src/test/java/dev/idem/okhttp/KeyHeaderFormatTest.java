package dev.idem.okhttp;

import dev.idem.core.http.KeyHeaderFormat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotencyKey;
import org.junit.jupiter.api.Test;

class KeyHeaderFormatTest {
  @Test
  void structuredStringQuotesTheKeyAndParsesBack() {
    IdempotencyKey key = IdempotencyKey.of("a'b;c=d");
    String value = KeyHeaderFormat.STRUCTURED_STRING.format(key);
    assertEquals("\"a'b;c=d\"", value);
    assertEquals(key, KeyHeaderFormat.parse(value));
    assertThrows(IllegalArgumentException.class, () -> KeyHeaderFormat.parse("\"a\\b\""), "escapes are refused");
  }

  @Test
  void bareIsTheKeyItself() {
    IdempotencyKey key = IdempotencyKey.generate();
    assertEquals(key.value(), KeyHeaderFormat.BARE.format(key));
    assertEquals(key, KeyHeaderFormat.parse(key.value()));
  }

  @Test
  void invalidHeaderNamesAreRefused() {
    IdemOkHttp.Builder b = IdemOkHttp.builder(dev.idem.core.IdempotentExecutor.builder().build());
    assertThrows(IllegalArgumentException.class, () -> b.headerName("Bad Name"));
    assertThrows(IllegalArgumentException.class, () -> b.headerName(""));
  }
}
