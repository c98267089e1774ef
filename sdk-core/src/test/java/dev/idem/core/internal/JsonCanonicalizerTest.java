package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * RFC 8785 (JCS), including the RFC's own examples and its Appendix B number vectors, and the one
 * place Idem leaves it on purpose: a number its double does not hold exactly keeps its own value.
 */
class JsonCanonicalizerTest {

  private static String canon(String json) {
    return JsonCanonicalizer.canonicalize(json.getBytes(StandardCharsets.UTF_8))
        .map(b -> new String(b, StandardCharsets.UTF_8))
        .orElseThrow(() -> new AssertionError("not canonicalized: " + json));
  }

  private static Optional<byte[]> raw(String json) {
    return JsonCanonicalizer.canonicalize(json.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void keyOrderAndWhitespaceDoNotMatter() {
    assertEquals("{\"a\":1,\"b\":[true,false,null],\"c\":{\"x\":\"y\"}}",
        canon(" {\n\t\"c\" : { \"x\" : \"y\" } ,\r\n \"b\":[ true , false,null ], \"a\":1 } "));
    assertEquals(canon("{\"b\":2,\"a\":1}"), canon("{\"a\":1,\"b\":2}"));
  }

  @Test
  void nestedObjectsAndArraysAreSortedRecursivelyButArraysKeepTheirOrder() {
    assertEquals("{\"a\":[{\"x\":1,\"y\":2},[3,{\"m\":0,\"n\":0}]],\"z\":{\"a\":{\"b\":{}}}}",
        canon("{\"z\":{\"a\":{\"b\":{}}},\"a\":[{\"y\":2,\"x\":1},[3,{\"n\":0,\"m\":0}]]}"));
    assertEquals("[3,1,2]", canon("[3, 1, 2]"));
    assertEquals("[]", canon("[ ]"));
    assertEquals("{}", canon("{ }"));
  }

  static Stream<Arguments> numbers() {
    return Stream.of(
        Arguments.of("1", "1"), Arguments.of("1.0", "1"), Arguments.of("1e0", "1"), Arguments.of("1E+0", "1"),
        Arguments.of("100", "100"), Arguments.of("1e2", "100"), Arguments.of("100.000", "100"),
        Arguments.of("-0", "0"), Arguments.of("-0.0", "0"), Arguments.of("0e10", "0"),
        Arguments.of("4.50", "4.5"), Arguments.of("2e-3", "0.002"), Arguments.of("-1.5", "-1.5"),
        Arguments.of("1e21", "1e+21"), Arguments.of("1e20", "100000000000000000000"),
        Arguments.of("123456789012345678901", "123456789012345678901"), // no double is this integer
        Arguments.of("123456789012345680000", "123456789012345680000"),
        Arguments.of("1e-7", "1e-7"), Arguments.of("0.000001", "0.000001"), Arguments.of("0.0000001", "1e-7"),
        Arguments.of("1E30", "1e+30"), Arguments.of("0.000000000000000000000000001", "1e-27"),
        Arguments.of("1.7976931348623157e308", "1.7976931348623157e+308"),
        Arguments.of("-1.7976931348623157e308", "-1.7976931348623157e+308"),
        Arguments.of("9007199254740992", "9007199254740992"),
        Arguments.of("9007199254740993", "9007199254740993"), // not 2^53: Idem keeps the value (the RFC would not)
        Arguments.of("9007199254740993.000", "9007199254740993"), Arguments.of("-9007199254740993", "-9007199254740993"),
        Arguments.of("9007199254740994", "9007199254740994"), // a double, exactly
        Arguments.of("333333333.33333329", "333333333.33333329"), Arguments.of("333333333.3333333", "333333333.3333333"),
        Arguments.of("0.10000000000000001", "0.10000000000000001"), Arguments.of("1.00000000000000000001", "1.00000000000000000001"),
        Arguments.of("1e-400", "1e-400"), Arguments.of("-1.50e-400", "-1.5e-400"),
        Arguments.of("1234567890123456789012345", "1.234567890123456789012345e+24"),
        Arguments.of("2e23", "2e+23"), // JDK 17 Double.toString says 1.9999999999999998E23
        Arguments.of("5e-324", "5e-324"), // JDK 17 says 4.9E-324
        Arguments.of("0.1", "0.1"), Arguments.of("0.30000000000000004", "0.30000000000000004"),
        Arguments.of("12e-400", "1.2e-399"), Arguments.of("0e-400", "0"));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("numbers")
  void numberForms(String in, String out) {
    assertEquals(out, canon(in));
    assertEquals("[" + out + "]", canon("[" + in + "]"));
  }

  /** RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text. */
  static Stream<Arguments> appendixB() {
    return Stream.of(
        Arguments.of(0x0000000000000000L, "0"),
        Arguments.of(0x8000000000000000L, "0"),
        Arguments.of(0x0000000000000001L, "5e-324"),
        Arguments.of(0x8000000000000001L, "-5e-324"),
        Arguments.of(0x7fefffffffffffffL, "1.7976931348623157e+308"),
        Arguments.of(0xffefffffffffffffL, "-1.7976931348623157e+308"),
        Arguments.of(0x4340000000000000L, "9007199254740992"),
        Arguments.of(0xc340000000000000L, "-9007199254740992"),
        Arguments.of(0x4430000000000000L, "295147905179352830000"),
        Arguments.of(0x44b52d02c7e14af5L, "9.999999999999997e+22"),
        Arguments.of(0x44b52d02c7e14af6L, "1e+23"),
        Arguments.of(0x44b52d02c7e14af7L, "1.0000000000000001e+23"),
        Arguments.of(0x444b1ae4d6e2ef4eL, "999999999999999700000"),
        Arguments.of(0x444b1ae4d6e2ef4fL, "999999999999999900000"),
        Arguments.of(0x444b1ae4d6e2ef50L, "1e+21"),
        Arguments.of(0x3eb0c6f7a0b5ed8cL, "9.999999999999997e-7"),
        Arguments.of(0x3eb0c6f7a0b5ed8dL, "0.000001"),
        Arguments.of(0x41b3de4355555553L, "333333333.3333332"),
        Arguments.of(0x41b3de4355555554L, "333333333.33333325"),
        Arguments.of(0x41b3de4355555555L, "333333333.3333333"),
        Arguments.of(0x41b3de4355555556L, "333333333.3333334"),
        Arguments.of(0x41b3de4355555557L, "333333333.33333343"),
        Arguments.of(0xbecbf647612f3696L, "-0.0000033333333333333333"),
        Arguments.of(0x43143ff3c1cb0959L, "1424953923781206.2"));
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @MethodSource("appendixB")
  void rfc8785AppendixBNumbers(long bits, String expected) {
    assertEquals(expected, JsonCanonicalizer.formatNumber(Double.longBitsToDouble(bits)));
  }

  @Test
  void everyFormattedNumberRoundTripsAndIsStable() {
    java.util.SplittableRandom r = new java.util.SplittableRandom(8785);
    for (int i = 0; i < 4_000; i++) {
      // half arbitrary bit patterns (any exponent), half everyday magnitudes
      double d = i % 2 == 0 ? Double.longBitsToDouble(r.nextLong()) : (r.nextDouble() - 0.5) * Math.pow(10, r.nextInt(-8, 12));
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        continue;
      }
      String s = JsonCanonicalizer.formatNumber(d);
      assertEquals(d == 0 ? 0.0 : d, Double.parseDouble(s), s);
      assertEquals(s, canon(s), "canonical text must be a fixed point");
    }
  }

  /**
   * Through doubles these pairs had one canonical form, so one fingerprint: a key reused with the
   * second got the first one's replay, though an app reading a long or a BigDecimal sees two payloads.
   * Found by a review on 2026-12-04; failed before the fix.
   */
  @ParameterizedTest
  @ValueSource(strings = {"9007199254740993 9007199254740992", "-9007199254740993 -9007199254740992",
      "0.10000000000000001 0.1", "333333333.33333329 333333333.3333333", "12345678901234567890 12345678901234567000",
      "1e-400 0", "4503599627370497.5 4503599627370498", "1.00000000000000000001 1"})
  void numbersTheirDoubleDoesNotHoldDoNotCollideWithTheDouble(String pair) {
    String[] p = pair.split(" ");
    assertNotEquals(canon("{\"to_account\":" + p[1] + "}"), canon("{\"to_account\":" + p[0] + "}"));
  }

  @Test
  void theExactFormIsNoDoublesTextAndIsAFixedPoint() {
    java.util.SplittableRandom r = new java.util.SplittableRandom(8785);
    int exact = 0;
    for (int i = 0; i < 20_000; i++) {
      // 17 to 25 significant digits, at everyday and extreme magnitudes: mostly no double's value
      StringBuilder t = new StringBuilder(r.nextBoolean() ? "-" : "").append(r.nextInt(1, 10));
      for (int k = r.nextInt(16, 25); k > 0; k--) {
        t.append(r.nextInt(10));
      }
      t.append('e').append(r.nextInt(-350, 280)); // never past a double's largest
      String out = canon(t.toString());
      String asDouble = JsonCanonicalizer.formatNumber(Double.parseDouble(t.toString()));
      java.math.BigDecimal value = new java.math.BigDecimal(t.toString());
      if (new java.math.BigDecimal(asDouble).compareTo(value) == 0) {
        assertEquals(asDouble, out, t::toString);
      } else {
        exact++;
        assertEquals(0, new java.math.BigDecimal(out).compareTo(value), t::toString);
        assertNotEquals(asDouble, out, t::toString);
      }
      assertEquals(out, canon(out), "canonical text must be a fixed point");
    }
    assertTrue(exact > 10_000, "most such numbers are no double's value: " + exact);
  }

  @Test
  void unicodeEscapesAndRawCharactersCanonicalizeAlike() {
    assertEquals(canon("{\"name\":\"caf\u00e9\"}"), canon("{\"name\":\"caf\\u00e9\"}"));
    assertEquals("{\"name\":\"caf\u00e9\"}", canon("{\"name\":\"caf\\u00E9\"}"));
    assertEquals(canon("{\"\u00e9\":1}"), canon("{\"\\u00e9\":1}"));
    assertEquals("\"\ud83d\ude00\"", canon("\"\\ud83d\\ude00\""));
  }

  @Test
  void stringEscapingFollowsTheRfc() {
    // RFC 8785 section 3.2.2.2
    assertEquals("\"\u20ac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"",
        canon("\"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\""));
    assertEquals("\"\\b\\f\\n\\r\\t\\u0000\\u001f\"", canon("\"\\b\\f\\n\\r\\t\\u0000\\u001F\""));
    assertEquals("\"\u007f\u0080\"", canon("\"\\u007f\\u0080\""));
  }

  @Test
  void rfcSection324Example() {
    // The RFC writes 333333333.33333329 as its double, 333333333.3333333; Idem keeps its value (see
    // JsonCanonicalizer). The RFC's other numbers are their doubles' values and come out as it says.
    String in = "{\n  \"numbers\": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],\n"
        + "  \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\",\n"
        + "  \"literals\": [null, true, false]\n}";
    assertEquals("{\"literals\":[null,true,false],\"numbers\":[333333333.33333329,1e+30,4.5,0.002,1e-27],"
        + "\"string\":\"\u20ac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}", canon(in));
  }

  @Test
  void propertiesSortByUtf16CodeUnitsNotCodePoints() {
    // RFC 8785 section 3.2.3: U+1F600 (surrogates D83D DE00) sorts before U+FB33
    String in = "{\"\\u20ac\":\"Euro Sign\",\"\\r\":\"Carriage Return\",\"\\ufb33\":\"Hebrew Letter Dalet With Dagesh\","
        + "\"1\":\"One\",\"\\ud83d\\ude00\":\"Emoji: Grinning Face\",\"\\u0080\":\"Control\","
        + "\"\\u00f6\":\"Latin Small Letter O With Diaeresis\"}";
    assertEquals("{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\","
        + "\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\","
        + "\"\ud83d\ude00\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}", canon(in));
  }

  @Test
  void scalarsAtTheTopLevel() {
    assertEquals("\"x\"", canon(" \"x\" "));
    assertEquals("1", canon("1.0"));
    assertEquals("null", canon("null"));
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "{\"a\":1,\"a\":2}", // duplicate property names: not canonicalized, the caller keeps the raw bytes
      "{\"a\":{\"b\":1,\"b\":1}}",
      "", "   ", "{", "{\"a\":1}}", "{\"a\":1} {\"b\":2}", "[1,]", "{'a':1}", "{\"a\":NaN}", "{\"a\":01}",
      "1e400", "[-1e400]", "\"\\ud800\"", "\"\\udc00x\"", "// comment\n{}", "nul", "tru"})
  void invalidOrAmbiguousJsonIsNotCanonicalized(String json) {
    assertTrue(raw(json).isEmpty(), json);
  }

  @Test
  void invalidUtf8IsNotCanonicalized() {
    assertTrue(JsonCanonicalizer.canonicalize(new byte[] {'"', (byte) 0xc3, (byte) 0x28, '"'}).isEmpty());
  }

  @Test
  void canonicalOutputIsUtf8() {
    byte[] out = JsonCanonicalizer.canonicalize("\"\\u00e9\"".getBytes(StandardCharsets.UTF_8)).orElseThrow();
    assertArrayEquals(new byte[] {'"', (byte) 0xc3, (byte) 0xa9, '"'}, out);
  }

  @Test
  void aDeepValueIsNotCopiedOncePerLevel() {
    // The guard canonicalizes whatever a client sends. A value 900 levels down (Jackson allows
    // 1,000), each level with a member sorting after it, must cost work in proportion to the
    // body, not to the body times its depth: a version that wrote each member's value apart and
    // copied it into its parent allocated about 900 copies of the inner string here. Bytes
    // allocated by this thread measure that without a clock.
    int depth = 900;
    String inner = "x".repeat(256 * 1024);
    byte[] body = ("{\"b\":".repeat(depth) + "\"" + inner + "\"" + ",\"a\":1}".repeat(depth))
        .getBytes(StandardCharsets.UTF_8);
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    org.junit.jupiter.api.Assumptions.assumeTrue(threads.isThreadAllocatedMemorySupported()
        && threads.isThreadAllocatedMemoryEnabled(), "this JVM does not count allocated bytes per thread");
    // Once first, not counted: a JVM's first call also loads and initializes Jackson's classes.
    byte[] canonical = JsonCanonicalizer.canonicalize(body).orElseThrow();
    long id = Thread.currentThread().getId();
    long before = threads.getThreadAllocatedBytes(id);
    JsonCanonicalizer.canonicalize(body).orElseThrow();
    long allocated = threads.getThreadAllocatedBytes(id) - before;

    assertArrayEquals(TreeCanonicalizer.canonicalize(body).orElseThrow(), canonical);
    assertTrue(allocated < 32L * body.length,
        () -> allocated + " bytes allocated to canonicalize " + body.length + " bytes " + depth + " levels deep");
  }
}
