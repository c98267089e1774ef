package dev.idem.server.servlet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.servlet.http.HttpServletRequest;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The form parsing and canonical encoding behind the guard's form-encoded requests. */
class FormBodyTest {
  @Test
  void theFormTypeIsKnownInAnyCaseWithParameters() {
    assertTrue(FormBody.isForm("application/x-www-form-urlencoded"));
    assertTrue(FormBody.isForm("Application/X-WWW-Form-Urlencoded ; charset=UTF-8"));
    assertFalse(FormBody.isForm("application/json"));
    assertFalse(FormBody.isForm("multipart/form-data; boundary=x"));
    assertFalse(FormBody.isForm(null));
  }

  @Test
  void aRequestWithoutAnEncodingIsDecodedAsIso88591AsTheServletSpecSays() {
    byte[] body = "name=caf%E9&raw=caf\u00e9".getBytes(StandardCharsets.ISO_8859_1);
    assertEquals(Map.of("name", List.of("caf\u00e9"), "raw", List.of("caf\u00e9")),
        FormBody.parse(body, FormBody.charset(request(null))));
    assertEquals(Map.of("name", List.of("caf\u00e9")),
        FormBody.parse("name=caf%C3%A9".getBytes(StandardCharsets.US_ASCII), FormBody.charset(request("UTF-8"))));
    assertEquals(StandardCharsets.ISO_8859_1, FormBody.charset(request("no-such-charset")),
        "an unknown charset decodes, as ISO-8859-1, rather than failing every getParameter");
  }

  @Test
  void pairsAreSplitAsTheContainersSplitThem() {
    Map<String, List<String>> parsed = FormBody.parse(
        "a=1&&=nameless&b&c=x=y&bad=%zz&a=2&sp=a+b%20c".getBytes(StandardCharsets.US_ASCII), StandardCharsets.UTF_8);
    Map<String, List<String>> expected = new LinkedHashMap<>();
    expected.put("a", List.of("1", "2"));
    expected.put("b", List.of(""));
    expected.put("c", List.of("x=y"));
    expected.put("sp", List.of("a b c"));
    assertEquals(expected, parsed);
    assertEquals(List.copyOf(expected.keySet()), List.copyOf(parsed.keySet()), "body order");
  }

  @Test
  void theBodysValuesComeAfterTheQuerys() {
    Map<String, String[]> query = new LinkedHashMap<>();
    query.put("qty", new String[] {"0"});
    query.put("src", new String[] {"q"});
    Map<String, String[]> merged = FormBody.merge(query, Map.of("qty", List.of("1", "2"), "note", List.of("n")));
    assertEquals(List.of("qty", "src", "note"), List.copyOf(merged.keySet()));
    assertArrayEquals(new String[] {"0", "1", "2"}, merged.get("qty"));
    assertArrayEquals(new String[] {"0"}, query.get("qty"), "the container's map is not changed");
  }

  @Test
  void theCanonicalFormSortsNamesKeepsValueOrderAndTellsParametersApart() {
    Map<String, String[]> one = new LinkedHashMap<>();
    one.put("qty", new String[] {"1", "2"});
    one.put("a&b", new String[] {"x=y"});
    Map<String, String[]> reordered = new LinkedHashMap<>();
    reordered.put("a&b", new String[] {"x=y"});
    reordered.put("qty", new String[] {"1", "2"});
    assertEquals("a%26b=x%3Dy&qty=1&qty=2", new String(FormBody.canonical(one), StandardCharsets.UTF_8));
    assertArrayEquals(FormBody.canonical(one), FormBody.canonical(reordered));
    assertFalse(new String(FormBody.canonical(one), StandardCharsets.UTF_8)
        .equals(new String(FormBody.canonical(Map.of("qty", new String[] {"2", "1"}, "a&b", new String[] {"x=y"})),
            StandardCharsets.UTF_8)), "another value order is another form");
  }

  private static HttpServletRequest request(String encoding) {
    return (HttpServletRequest) Proxy.newProxyInstance(FormBodyTest.class.getClassLoader(),
        new Class<?>[] {HttpServletRequest.class}, (proxy, method, args) -> {
          if (method.getName().equals("getCharacterEncoding")) {
            return encoding;
          }
          throw new UnsupportedOperationException(method.getName());
        });
  }

  @Test
  void pairsCountTheNonEmptyPartsAsTheParseReadsThem() {
    assertEquals(0, FormBody.pairs(new byte[0]));
    assertEquals(3, FormBody.pairs("a=1&&b&=2&".getBytes(StandardCharsets.US_ASCII)));
    assertEquals(1, FormBody.pairs("a=1%26".getBytes(StandardCharsets.US_ASCII)));
  }

  @Test
  void aDigestStandsApartFromEveryCanonicalEncodingAndFromAnotherFormsDigest() {
    byte[] one = FormBody.canonical(Map.of("v", new String[] {"{{{"}));
    byte[] other = FormBody.canonical(Map.of("v", new String[] {"{{}"}));
    assertEquals(33, FormBody.digest(one, 100).length);
    assertEquals(0, FormBody.digest(one, 100)[0], "a NUL, which no canonical encoding holds");
    assertArrayEquals(FormBody.digest(one, 100), FormBody.digest(one.clone(), 100));
    assertFalse(java.util.Arrays.equals(FormBody.digest(one, 100), FormBody.digest(other, 100)));
    assertEquals(20, FormBody.digest(one, 20).length, "cut under a cap smaller than a digest");
  }

  @Test
  void theLeastLengthOfAFormIsItsParametersUnescaped() {
    Map<String, String[]> parameters = new LinkedHashMap<>();
    parameters.put("v", new String[] {"{{", "caf\u00e9"});
    parameters.put("b", new String[] {""});
    // v={{&v=café&b= : 4 + 1 + 7 (é is 2 bytes in UTF-8) + 1 + 2
    assertEquals(15, FormBody.leastLength(parameters, StandardCharsets.UTF_8));
    assertEquals(0, FormBody.leastLength(Map.of(), StandardCharsets.UTF_8));
  }
}
