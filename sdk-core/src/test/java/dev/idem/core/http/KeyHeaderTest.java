package dev.idem.core.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.spi.adapter.AdapterSupport;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The client's side of the shared key table (key-header-table.json, copied into the server's
 * tests, whose KeyHeaderAgreementTest holds the guard to the same rows): the parser, the key
 * syntax, both spellings, and an adapter's reading of a key header the app set.
 */
class KeyHeaderTest {
  private static final IdempotentExecutor EXECUTOR = IdempotentExecutor.builder().build();
  private static final AdapterSupport ADAPTER = AdapterSupport.of(EXECUTOR, ProtocolHeaders.KEY, KeyHeaderFormat.BARE,
      UntaggedPolicy.PASS_THROUGH);

  record Row(List<String> header, String key, String why) {
    @Override
    public String toString() {
      return why;
    }
  }

  @AfterAll
  static void closeExecutor() {
    EXECUTOR.close();
  }

  static Stream<Row> rows() throws IOException {
    JsonNode table;
    try (InputStream in = KeyHeaderTest.class.getResourceAsStream("key-header-table.json")) {
      table = new ObjectMapper().readTree(in);
    }
    List<Row> rows = new ArrayList<>();
    for (JsonNode r : table.get("rows")) {
      List<String> header = new ArrayList<>();
      r.get("header").forEach(v -> header.add(v.asText()));
      rows.add(new Row(header, r.get("key").isNull() ? null : r.get("key").asText(), r.get("why").asText()));
    }
    return rows.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void everyRowReadsAsTheTableSays(Row row) throws Exception {
    KeyHeader parsed = KeyHeader.parse(row.header());
    assertFalse(parsed.isAbsent());
    if (row.key() == null) {
      assertTrue(parsed.key().isEmpty());
      String why = parsed.problem().orElseThrow();
      row.header().forEach(v -> assertFalse(v.length() > 3 && why.contains(v), "the reason never repeats the value"));
      assertThrows(IdempotencyException.class, () -> ADAPTER.keyFor(row.header(), null));
      if (row.header().size() == 1) {
        assertThrows(IllegalArgumentException.class, () -> KeyHeaderFormat.parse(row.header().get(0)));
      }
      return;
    }
    IdempotencyKey key = IdempotencyKey.of(row.key());
    assertEquals(key, parsed.key().orElseThrow());
    assertTrue(parsed.problem().isEmpty());
    assertEquals(key, ADAPTER.keyFor(row.header(), null));
    assertEquals(key, KeyHeaderFormat.parse(row.header().get(0)));
    for (KeyHeaderFormat format : KeyHeaderFormat.values()) {
      assertEquals(key, KeyHeader.parse(List.of(format.format(key))).key().orElseThrow(), format.name());
    }
  }

  @Test
  void noFieldLineIsAbsentNotMalformed() {
    KeyHeader absent = KeyHeader.parse(List.of());
    assertTrue(absent.isAbsent());
    assertTrue(absent.key().isEmpty());
    assertTrue(absent.problem().isEmpty());
    assertThrows(NullPointerException.class, () -> KeyHeader.parse(null));
  }

  @Test
  void everyKeyIdemMakesIsReadBackInBothSpellings() {
    byte[] secret = new byte[16];
    for (IdempotencyKey key : List.of(IdempotencyKey.generate(), IdempotencyKey.derive(secret, "s", "o", "r"))) {
      for (KeyHeaderFormat format : KeyHeaderFormat.values()) {
        assertEquals(key, KeyHeaderFormat.parse(format.format(key)));
      }
    }
  }

  @Test
  void aKeyHasNoCharacterThatTheHeaderWouldEscapeOrSplit() {
    for (String bad : List.of("a\"b", "a,b", "a\\b")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IdempotencyKey.of(bad));
      assertTrue(e.getMessage().contains("index 1"), e.getMessage());
    }
    assertEquals("\"abc\"", KeyHeaderFormat.STRUCTURED_STRING.format(IdempotencyKey.of("abc")));
    assertNull(KeyHeader.parse(List.of("\"a\\b\"")).key().orElse(null), "an escape is never guessed");
  }
}
