package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The normalized header form, made by {@link HeaderMaps#normalize} or by an adapter's {@link HeaderMaps.Builder}. */
class HeaderMapsTest {
  @Test
  void builderMakesWhatNormalizeMakesOfTheSameLines() {
    Map<String, List<String>> built = new HeaderMaps.Builder().add("Content-Type", "application/json")
        .add("Set-Cookie", "a=1").add("X-B", "2").add("set-cookie", "b=2").add("SET-COOKIE", "c=3").build();
    Map<String, List<String>> given = new LinkedHashMap<>();
    given.put("Content-Type", List.of("application/json"));
    given.put("Set-Cookie", List.of("a=1"));
    given.put("X-B", List.of("2"));
    given.put("set-cookie", List.of("b=2"));
    given.put("SET-COOKIE", List.of("c=3"));
    Map<String, List<String>> normalized = HeaderMaps.normalize(given);
    TreeMap<String, List<String>> expected = new TreeMap<>(Map.of("content-type", List.of("application/json"),
        "set-cookie", List.of("a=1", "b=2", "c=3"), "x-b", List.of("2")));
    assertEquals(expected, built);
    assertEquals(expected, normalized);
    assertEquals(built, expected);
    assertEquals(expected.hashCode(), built.hashCode());
    assertEquals(expected.toString(), built.toString());
    assertEquals(List.copyOf(expected.keySet()), List.copyOf(built.keySet()));
    assertEquals(Optional.of("a=1"), HeaderMaps.first(built, "SET-Cookie"));
    assertEquals(Optional.empty(), HeaderMaps.first(built, "x-c"));
  }

  @Test
  void aNormalizedMapIsTakenAsItIsAndNothingChangesIt() {
    Map<String, List<String>> built = new HeaderMaps.Builder().add("A", "1").add("a", "2").build();
    assertSame(built, HeaderMaps.normalize(built));
    Map<String, List<String>> normalized = HeaderMaps.normalize(Map.of("B", List.of("1")));
    assertSame(normalized, HeaderMaps.normalize(normalized));
    for (Map<String, List<String>> m : List.of(built, normalized)) {
      assertThrows(UnsupportedOperationException.class, () -> m.put("c", List.of("3")));
      assertThrows(UnsupportedOperationException.class, () -> m.putIfAbsent("c", List.of("3")));
      assertThrows(UnsupportedOperationException.class, () -> m.remove(m.keySet().iterator().next()));
      assertThrows(UnsupportedOperationException.class, m::clear);
      assertThrows(UnsupportedOperationException.class, () -> m.entrySet().iterator().next().setValue(List.of()));
      assertThrows(UnsupportedOperationException.class, () -> m.values().iterator().next().set(0, "x"));
    }
  }

  @Test
  void aMapSomeoneElseHoldsIsCopied() {
    List<String> values = new ArrayList<>(List.of("1"));
    Map<String, List<String>> given = new TreeMap<>(Map.of("a", values));
    Map<String, List<String>> normalized = HeaderMaps.normalize(given);
    given.put("b", List.of("2"));
    values.add("3");
    assertEquals(Map.of("a", List.of("1")), normalized);
  }

  @Test
  void commonNamesInEverySpellingAndOtherNamesComeOutInLowerCase() {
    for (String name : List.of("Content-Type", "Content-type", "CONTENT-TYPE", "content-type", "cOnTeNt-TyPe")) {
      assertEquals("content-type", HeaderMaps.lowerCase(name), name);
    }
    assertEquals("etag", HeaderMaps.lowerCase("ETag"));
    assertEquals("etag", HeaderMaps.lowerCase("Etag"));
    assertEquals("x-idem-custom", HeaderMaps.lowerCase("X-Idem-Custom"));
    assertThrows(NullPointerException.class, () -> HeaderMaps.lowerCase(null));
    // A common name and a spelling outside the table still meet under one name, values in order.
    Map<String, List<String>> built = new HeaderMaps.Builder().add("Content-length", "1").add("cONTENT-LENGTH", "2")
        .add("Date", "d").build();
    assertEquals(Map.of("content-length", List.of("1", "2"), "date", List.of("d")), built);
  }
}
